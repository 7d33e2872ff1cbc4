"""A comprehension with an unpacking target, right after the section's own write.

Serial invariant: after ``pairs[0][0] += 1``, ``[a for a, b in pairs][0]``
is the new value. One thread suffices.

Attacks: ``match`` and comprehension unpacking. The comprehension's target
``a, b`` unpacks each shared item in C: unless the rewriter reads the item
through a barrier first, it gets the committed item and misses the
section's buffered write to it.
"""

import transaction

pairs = [[50, 50] for _ in range(6)]
bad = []


def own(i):
    pairs[0][0] += 1
    firsts = [a for a, b in pairs]
    if firsts[0] != pairs[0][0]:
        bad.append(("own write missed by unpacking", firsts[0], pairs[0][0]))
    pairs[0][0] -= 1


def main():
    for i in range(100):
        transaction.add(own, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
