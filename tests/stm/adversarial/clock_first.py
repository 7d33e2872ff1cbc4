"""A journal of wall-clock stamps: one call stamps with time.time(), the other
with datetime.now() (library code, run by an inevitable section).

Serial invariant: stamps are appended in serial order and one wall clock
never goes back: JOURNAL is non-decreasing (tolerance 1 ms).
Attacks: txn.enter_clocks_read_in_place enters "now" only for clocks that some
section already COMMITTED a reading of; before the first such commit an
inevitable section's library reading (datetime.now) is not ordered against an
optimistic time.time() reading made earlier and committed later.
Red-team round 17: BAD 2/2 on 2 threads (before txn.CLOCKS_IN_USE).
"""
import datetime
import sys
import time
import transaction

JOURNAL = []


def early(i):
    t = time.time()
    x = 0
    for k in range(200000):
        x += k
    JOURNAL.append(("early", t))


def late(i):
    x = 0
    for k in range(2000):
        x += k
    JOURNAL.append(("late", datetime.datetime.now().timestamp()))


def main():
    transaction.add(early, 0)
    transaction.add(late, 1)
    transaction.run()
    back = [(a, b) for a, b in zip(JOURNAL, JOURNAL[1:]) if b[1] < a[1] - 0.001]
    if back:
        print("BAD went back", back); sys.exit(1)
    print("OK", [n for n, _ in JOURNAL])


main()
