"""Finalizers of an aborted attempt's objects that make objects with finalizers of their own.

A Lease's ``__del__`` makes a Receipt, and so does the ``finally`` of a
half-run generator; a Receipt's ``__del__`` journals it. Each call makes a
Lease and a generator, bumps a hot counter (attempts abort, more under
faults), works, reads the counter again and drops both.
Serial invariant: one Lease and one generator per committed call: RECEIPTS
holds each (i, tag) exactly once, 2 * N in all.
Attacks: objects made while an aborted attempt's objects die in the engine's
throwaway transaction: kept by its registry past its end, they once died
later with no transaction current, and their finalizers committed as
sections of their own (writes of attempts that never happened).
"""
from collections import Counter

import transaction

N = 300
HOT = {"n": 0}
RECEIPTS = []


class Receipt:
    def __init__(self, i, tag):
        self.i = i
        self.tag = tag

    def __del__(self):
        RECEIPTS.append((self.i, self.tag))


class Lease:
    def __init__(self, i):
        self.i = i

    def __del__(self):
        Receipt(self.i, "lease")


def steps(i):
    try:
        yield 1
        yield 2
    finally:
        Receipt(i, "gen")


def work(i):
    lease = Lease(i)
    generator = steps(i)
    next(generator)
    HOT["n"] += 1
    x = 0
    for j in range(2000):
        x += j
    if HOT["n"] < 0:
        print("never")
    del lease, generator


for i in range(N):
    transaction.add(work, i)
transaction.run()
counts = Counter(RECEIPTS)
twice = sorted(key for key, seen in counts.items() if seen != 1)
print(HOT, len(RECEIPTS), twice[:5])
ok = HOT["n"] == N and len(RECEIPTS) == 2 * N and not twice
print("OK" if ok else "BAD")
