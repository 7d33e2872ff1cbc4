"""A ChainMap over shared dicts, written through the ChainMap and through its front dict.

Serial invariant: every call adds 1 to key "n" of the front dict (odd
calls through ``CM["n"] = CM["n"] + 1``, even calls on ``FRONT`` itself);
after K calls FRONT["n"] == K, and BASE is never changed.
Attacks: library code (ChainMap's methods) writing a container it reaches
only through an attribute of its instance (``CM.maps[0]``): the stripes
held for an unknown call must cover what its arguments hold, not only
the arguments.
"""
import collections

import transaction

K = 1000
FRONT = {"n": 0}
BASE = {"n": -100, "z": 1}
CM = collections.ChainMap(FRONT, BASE)


def step(i):
    if i % 2:
        v = CM["n"]
        for _ in range(300):
            pass
        CM["n"] = v + 1
    else:
        v = FRONT["n"]
        for _ in range(300):
            pass
        FRONT["n"] = v + 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    ok = FRONT["n"] == K and BASE == {"n": -100, "z": 1}
    print("OK" if ok else "BAD", FRONT, BASE)


main()
