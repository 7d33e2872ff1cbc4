"""A thread the script starts inserts keys into a shared ``defaultdict``
(``X[k].append(k)``: the key inserted by ``__missing__``) while queued calls
read ``len(X)`` and store a key of their own.

Serial invariant (and plain Python threads'): no exception, no hang; every
key of the thread and of the calls present, holding [k].

Attacks: the thread is plain code, which writes in place beside the
sections; ``len(X)`` in a section has the engine watch the defaultdict for
keys C code inserts (txn.hold_lookups_in_place), a watch that iterated the
live dict and so raised "dictionary changed size during iteration" or hung
(1 run in 3, red-team round 44; under --backend serial too). It copies the
dict in C now.
"""
import collections
import threading

import transaction

N = 300
M = 4000
X = collections.defaultdict(list)
SIZES = []
go = threading.Event()


def plain():
    go.wait()
    for j in range(M):
        k = -j - 1
        X[k].append(k)


T = threading.Thread(target=plain)
T.start()


def work(i):
    go.set()
    SIZES.append(len(X))
    X[i] = [i]


for i in range(N):
    transaction.add(work, i)
transaction.run()
T.join()
want = set(range(N)) | set(range(-M, 0))
bad = [k for k in want if X.get(k) != [k]]
print(f"BAD {len(bad)} lost" if bad or set(X) != want else "OK")
