"""A job queue kept in a shared collections.deque with 20000 pending jobs; 300 worker
sections each take one job with popleft() and append a follow-up job with append().
Serial invariant: the run finishes (plain Python: a few milliseconds); len(JOBS) stays
20000 and DONE counts 300.
Attacks: the engine's private copy of a shared deque (copy-on-first-write, txn._copy ->
copy.copy -> deque.__copy__): on CPython 3.13t deque.__copy__ costs ~10 us per item
(deque(d) costs ~0.03 us), so every section touching the queue pays ~0.2 s, and
aborted attempts pay again.
"""
import collections
import os
import sys
import time
import transaction

N = int(os.environ.get("N", "20000"))
JOBS = collections.deque(range(N))
DONE = {"n": 0}


def work(i):
    j = JOBS.popleft()
    JOBS.append(j + N)
    DONE["n"] += 1


def main():
    t0 = time.time()
    for i in range(300):
        transaction.add(work, i)
    transaction.run()
    dt = time.time() - t0
    ok = len(JOBS) == N and DONE["n"] == 300
    print("OK" if ok else "BAD", len(JOBS), DONE, "%.2fs" % dt)
    return 0 if ok else 1


sys.exit(main())
