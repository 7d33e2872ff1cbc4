"""``object.__setattr__`` applied to a class, which Python refuses.

Serial invariant: plain Python raises ``TypeError: can't apply this
__setattr__ to type object`` for every call, so ``Cfg.x`` stays 0 and
``refused == K``.

Attacks: the engine's special handler for ``object.__setattr__`` buffers
``(obj, name, value)`` as an attribute write without the checks
``object.__setattr__`` makes (the Carlo hack check against types, and
read-only attributes).
"""

import transaction

K = 20


class Cfg:
    x = 0


stats = {"refused": 0}


def job(i):
    try:
        object.__setattr__(Cfg, "x", i + 1)
    except TypeError:
        stats["refused"] += 1


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    ok = Cfg.x == 0 and stats["refused"] == K
    print("OK" if ok else "BAD", "Cfg.x", Cfg.x, stats)


main()
