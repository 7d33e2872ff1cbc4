"""A ``__del__`` that queues a follow-up call with ``transaction.add``.

'make' calls keep objects in a shared dict and queue a 'drop' call, whose
commit frees the object; some objects die in the call that made them.
Free-threaded CPython frees an object on the thread that made it, when that
thread next checks for pending work: a worker may be inside the run queue's
own ``with lock:`` block then.
Serial invariant: every object's follow-up call runs exactly once, inside
run(): FOLLOWED holds each i once, N in all, and HOT counts every call.
Attacks: a finalizer run while its thread held the queue's lock (its
transaction.add waited for that lock: run() hung for ever); finalizers put
off past the end of the run (their calls lost).
"""
from collections import Counter

import transaction

N = 300
POOL = {}
FOLLOWED = []
HOT = {"n": 0}


class Resource:
    def __init__(self, i):
        self.i = i

    def __del__(self):
        transaction.add(follow, self.i)


def follow(i):
    HOT["n"] += 1
    FOLLOWED.append(i)


def make(i):
    HOT["n"] += 1
    if i % 2:
        POOL[i] = Resource(i)
        transaction.add(drop, i)
    else:
        resource = Resource(i)
        del resource


def drop(i):
    x = 0
    for j in range(500):
        x += j
    del POOL[i]


for i in range(N):
    transaction.add(make, i)
transaction.run()
counts = Counter(FOLLOWED)
twice = sorted(i for i, seen in counts.items() if seen != 1)
missing = [i for i in range(N) if i not in counts]
print(HOT, len(FOLLOWED), twice[:5], missing[:5])
print("OK" if not twice and not missing and HOT["n"] == 2 * N else "BAD")
