"""An inevitable section (it opens a file) calls an application function
through library Python (functools.singledispatch), handing it a small shared
dict D; meanwhile a plain threading.Thread churns D (inserts a key, deletes
it), keeping it small. The callee stores D[i] = i.

Serial invariant (plain Python threads too): no exception, no hang; every
key 0..N-1 present; the thread's keys all gone.

Attacks: library code run in place by an inevitable section may fill the
containers it is handed with what the application gives it; the engine
watches small ones (section._arguments_filled) and iterated the live dict to
find what was added, while the plain thread changed it ("dictionary changed
size during iteration", 8 runs of 8, red-team round 45). It copies in C and
compares keys by identity now.
"""
import functools
import os
import threading

import transaction

N = 300
M = 200000
D = {}
ERRORS = []
go = threading.Event()
stop = threading.Event()


def plain():
    go.wait()
    j = 0
    while not stop.is_set() and j < M:
        D[-j - 1000] = j
        del D[-j - 1000]
        j += 1


@functools.singledispatch
def fill(d, i):
    d[i] = i


def work(i):
    go.set()
    with open(os.devnull, "w") as sink:
        sink.write("x")
    fill(D, i % 100)
    fill(D, i)
    if i >= 100:
        del D[i]


T = threading.Thread(target=plain)
T.start()
for i in range(N):
    transaction.add(work, i)
try:
    transaction.run()
except Exception as e:
    ERRORS.append(repr(e))
stop.set()
go.set()
T.join()
bad = sorted(set(D) ^ set(range(100)))
print(f"BAD {len(bad)} wrong keys, errors {ERRORS[:2]}" if bad or ERRORS else f"OK {N}")
