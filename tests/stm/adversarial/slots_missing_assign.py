"""``obj.y = v`` on a ``__slots__`` instance that has no slot ``y``, inside ``try``.

Serial invariant: plain Python raises ``AttributeError`` at the assignment,
which the call catches: ``refused == K`` and the run ends normally.

Attacks: where a buffered attribute write is checked. The attribute
barrier logs ``p.y = i`` without asking whether the object can hold ``y``;
the error comes at commit, when the log is published, outside the
section's ``try``, and ``transaction.run()`` raises it.
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
        p.y = i
    except AttributeError:
        stats["refused"] += 1


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    print("OK" if stats["refused"] == K else "BAD", stats)


main()
