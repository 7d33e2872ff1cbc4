"""__del__ that queues a follow-up call with transaction.add.
Objects are made by 'make' calls, kept in a shared dict, and dropped by a later 'drop' call
(their last reference goes at that call's commit).  Some die in the call that made them.
Serial invariant: every i's follow-up runs exactly once, inside run().
Attacks: free-threaded CPython frees an object on the thread that holds the run queue's lock (in
its push, or a worker's bookkeeping, inside Condition.notify); the finalizer ran there at once,
and its transaction.add waited for the lock its own thread held: run() hung. Finalizers now wait
until the lock is released.
"""
import os, sys
import transaction

N = int(os.environ.get("N", "200"))
POOL = {}
J = []
ERRS = []
HOT = {"n": 0}
sys.unraisablehook = lambda u: ERRS.append(repr(u.exc_value))


class Res:
    def __init__(self, i):
        self.i = i

    def __del__(self):
        transaction.add(follow, self.i)


def follow(i):
    HOT["n"] += 1
    J.append(i)


def make(i):
    if i % 2:
        POOL[i] = Res(i)
        transaction.add(drop, i)
    else:
        r = Res(i)
        HOT["n"] += 1
        del r


def drop(i):
    x = 0
    for j in range(500):
        x += j
    del POOL[i]


for i in range(N):
    transaction.add(make, i)
transaction.run()
from collections import Counter
c = Counter(J)
bad = {k: v for k, v in c.items() if v != 1}
missing = [i for i in range(N) if i not in c]
if bad or missing or ERRS:
    print("BAD dup", list(bad.items())[:5], "missing", len(missing), missing[:8], "errs", ERRS[:3])
else:
    print("OK", len(J))
