"""Audits snapshot a shared object with ``copy.copy`` while transfers move value in it.

Serial invariant: ``p.a + p.b == 1000`` between calls, so in every snapshot.

Attacks: uninstrumented code reading the attributes of shared instances,
concurrently: ``copy.copy`` reads ``p.__dict__`` past the barriers, so
unless the engine records those reads first, the attributes it copies are
not part of the audit's snapshot and can belong to a transfer's commit
half published.
"""

import copy

import transaction


class Pair:
    def __init__(self):
        self.a = 500
        self.b = 500


p = Pair()
bad = []


def transfer(i):
    amount = (i * 7) % 50 + 1
    if (i // 2) % 2:            # alternate directions
        p.a -= amount
        p.b += amount
    else:
        p.b -= amount
        p.a += amount


def audit(i):
    snap = copy.copy(p)
    if snap.a + snap.b != 1000:
        bad.append(("torn", snap.a, snap.b))


def main():
    for i in range(600):
        transaction.add(transfer if i % 2 == 0 else audit, i)
    transaction.run()
    if p.a + p.b != 1000:
        bad.append(("final", p.a, p.b))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
