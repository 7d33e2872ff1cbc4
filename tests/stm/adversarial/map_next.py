"""Rows drawn from shared iterators with ``map(next, STREAMS)``.

Serial invariant: every call takes the next id of each of the twenty shared
``itertools.count()`` streams once; with K calls the ids taken are exactly
0..K-1 in each stream, none skipped or repeated, and each row holds the
same id twenty times.

Attacks: a shared iterator consumed through a lazy object the section
made: ``map(next, STREAMS)`` is a fresh map (the section's own), and
``list()`` of it calls ``next`` on the shared counters from C.
"""

import itertools

import transaction

K = 300
STREAMS = [itertools.count() for _ in range(20)]
taken = []
stats = {"n": 0}


def take(i):
    row = list(map(next, STREAMS))
    stats["n"] += 1             # every call conflicts with every other one
    taken.append(row)


def main():
    for i in range(K):
        transaction.add(take, i)
    transaction.run()
    bad = []
    torn = [r for r in taken if len(set(r)) != 1]
    if torn:
        bad.append(("row with ids of two different calls", torn[0]))
    for col in (0, 19):
        got = sorted(r[col] for r in taken)
        if got != list(range(K)):
            bad.append(("stream", col, "ids", len(got), "max", max(got), "distinct", len(set(got))))
    print("BAD" if bad else "OK", bad)


main()
