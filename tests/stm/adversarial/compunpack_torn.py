"""Audits unpack a shared list of pairs in a comprehension while transfers move value.

Serial invariant: each pair sums to 100 between calls, so every sum an audit
computes with ``[a + b for a, b in pairs]`` is 100.

Attacks: ``match`` and comprehension unpacking, concurrently: items unpacked
with no read barrier would not be part of the audit's snapshot, so an audit
could see one transfer's commit half published (a torn read) and still
commit.
"""

import transaction

pairs = [[50, 50] for _ in range(6)]
bad = []


def spin():
    x = 0
    for j in range(100):
        x += j
    return x


def transfer(i):
    pair = pairs[i % 6]
    pair[0] -= 3
    spin()
    pair[1] += 3


def audit(i):
    sums = [a + b for a, b in pairs]
    if any(s != 100 for s in sums):
        bad.append(("torn", sums))


def main():
    for i in range(600):
        transaction.add(transfer if i % 2 == 0 else audit, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
