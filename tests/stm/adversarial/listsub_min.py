"""The smallest overriding ``list`` subclass: ``__setitem__`` delegating to ``super()``.

Serial invariant: each call adds one to one slot, so the slots sum to ``K``.

Attacks: container subclasses that override methods. A private stand-in
copy of the list, itself an instance of the subclass, recursed into the
override on commit (a ``RecursionError`` on one thread, a hang on two):
such a section must rerun inevitably on the real object.
"""

import transaction


class Slots(list):
    def __setitem__(self, i, value):
        super().__setitem__(i, value)


slots = Slots([0] * 4)
K = 20


def put(i):
    slots[i % 4] = slots[i % 4] + 1


def main():
    for i in range(K):
        transaction.add(put, i)
    transaction.run()
    print("OK" if sum(slots) == K else "BAD", "sum", sum(slots), "expected", K)


main()
