"""A shared ``list`` subclass keeping a running total in an attribute on every store.

Serial invariant: ``bag.total == sum(bag)`` between calls.

Attacks: container subclasses that override methods: ``__setitem__`` reads
the old item (``self[i]``), updates an attribute and delegates to
``super()``; the list and the attribute must change together, exactly once.
"""

import transaction


class Bag(list):
    def __init__(self, n):
        super().__init__([0] * n)
        self.total = 0

    def __setitem__(self, i, value):
        self.total += value - self[i]
        super().__setitem__(i, value)


bag = Bag(8)
bad = []


def put(i):
    bag[i % 8] = bag[i % 8] + 1
    size = len(bag)
    bag[(i + 3) % 8] = bag[(i + 3) % 8] + 2
    return size


def audit(i):
    if bag.total != sum(bag):
        bad.append((bag.total, sum(bag)))


def main():
    for i in range(200):
        transaction.add(put if i % 4 else audit, i)
    transaction.run()
    audit(0)
    print("BAD" if bad else "OK", len(bad), bad[:3], "total", bag.total, "sum", sum(bag))


main()
