"""``object.__setattr__`` on a ``__slots__`` instance, for a name it has no slot for.

Serial invariant: plain Python raises ``AttributeError`` for every call
(``P`` has only the slot ``x``), caught by the call: ``refused == K`` and
the run ends normally.

Attacks: the engine's special handler for ``object.__setattr__`` buffers
the write without asking whether the object can take it; the error can
only come at commit, when the log is published.
"""

import transaction

K = 20


class P:
    __slots__ = ("x",)

    def __init__(self):
        self.x = 0


p = P()
stats = {"refused": 0}


def job(i):
    try:
        object.__setattr__(p, "y", i)
    except AttributeError:
        stats["refused"] += 1


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    print("OK" if stats["refused"] == K else "BAD", stats)


main()
