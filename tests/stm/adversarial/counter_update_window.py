"""Sections add a shared buffer of words into a shared Counter (`COUNTS.update(BUF)`),
while other sections keep replacing words in the buffer (same length).
Serial invariant: every update adds exactly len(BUF) == N counts:
sum(COUNTS.values()) == N * number_of_updaters at the end (and per updater, the
total grows by exactly N).
Attacks: Counter.update (Python, 'mutates 0') runs on the section's copy of COUNTS
inside calls.call_reading, with BUF -- shared, not written by the section -- read in a
version window; when a writer commits to BUF meanwhile, the window calls the bound
update AGAIN, and the copy counts the buffer twice.
"""
import collections
import os
import sys
import transaction

N = int(os.environ.get("N", "5000"))
BUF = ["w%d" % (k % 50) for k in range(N)]
COUNTS = collections.Counter()
E = {"n": 0}
BAD = []


def updater(i):
    before = COUNTS.total()
    COUNTS.update(BUF)
    grew = COUNTS.total() - before
    E["n"] += 1
    if grew != N:
        BAD.append((i, grew))


def writer(i):
    k = (i * 7) % N
    BUF[k] = "w%d" % (i % 50)


def main():
    for i in range(300):
        transaction.add(updater if i % 3 == 0 else writer, i)
    transaction.run()
    total = COUNTS.total()
    ok = not BAD and total == N * E["n"]
    print("OK" if ok else "BAD", total, N * E["n"], len(BAD), BAD[:3])
    return 0 if ok else 1


sys.exit(main())
