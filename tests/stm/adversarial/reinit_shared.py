"""A shared list refilled with ``list.__init__(L, items)`` (sixth round).

Serial invariant: writers reset the pair to [n + 1, n + 1] as a whole, so
readers always see two equal items and the pair ends at the number of writes.

Attacks: ``__init__`` called again on an existing shared container. The
table took it for a reader, so it changed the live list unversioned (lost
updates, IndexError while a reader saw it emptied) or, after a whole read,
refilled the section's copy, which was dropped. It is now a mutator.
"""
import collections
import transaction

K = 1200
Q = [0, 0]
bad = []


def job(i):
    if i % 2:
        n = Q[0] + 1
        for _ in range(100):  # spin
            pass
        list.__init__(Q, [n, n])
    elif Q[0] != Q[1]:
        bad.append(list(Q))


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    if list(Q) != [K // 2] * 2:
        bad.append(("final", list(Q)))
    print("BAD %d %r" % (len(bad), bad[-3:]) if bad else "OK")


main()
