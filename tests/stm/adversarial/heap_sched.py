"""A shared job scheduler: heapq of (prio, seq, Job) tuples, dataclass(order=True)
Jobs in a second heap whose priority is bumped in place then heapify'd,
bisect.insort with key= into a sorted list of objects.
Serial invariant: every job popped exactly once; pops come out in heap
order within a section; the insort list stays sorted by key.

Attacks: heapq.heapify and bisect over items (dataclass(order=True) jobs,
tuples) whose priorities the section changed in place: the comparisons in C
must see the section's own writes.
"""
import sys
import heapq
import bisect
import itertools
from dataclasses import dataclass, field
import transaction

@dataclass(order=True)
class Job:
    prio: int
    name: str = field(compare=False)

HEAP = []
SEQ = itertools.count()
DONE = []
JOBS = [Job(k, "j%d" % k) for k in range(10)]
heapq.heapify(JOBS)
SORTED = []
bad = []

class Ev:
    def __init__(self, t, i):
        self.t = t
        self.i = i

def produce(i):
    heapq.heappush(HEAP, (i % 17, next(SEQ), "job%d" % i))

def consume(i):
    if len(HEAP) >= 2:
        a = heapq.heappop(HEAP)
        b = heapq.heappop(HEAP)
        if a > b:
            bad.append(("heap order", i, a, b))
        DONE.append(a[2]); DONE.append(b[2])

def bump(i):
    JOBS[0].prio += 5
    heapq.heapify(JOBS)
    if JOBS[0].prio != min(j.prio for j in JOBS):
        bad.append(("heapify dataclass", i))
    bisect.insort(SORTED, Ev((i * 37) % 101, i), key=lambda e: e.t)
    ts = [e.t for e in SORTED]
    if ts != sorted(ts):
        bad.append(("insort order", i))

def step(i):
    (produce, consume, bump)[i % 3](i)

def main():
    n = 600
    for i in range(n):
        transaction.add(step, i)
    transaction.run()
    rest = [x[2] for x in HEAP]
    allj = sorted(DONE + rest)
    if allj != sorted("job%d" % i for i in range(0, n, 3)):
        bad.append(("jobs", len(DONE), len(rest), len(set(allj))))
    if sum(j.prio for j in JOBS) != 45 + 5 * (n // 3) or len(SORTED) != n // 3:
        bad.append(("final", sum(j.prio for j in JOBS), len(SORTED)))
    if bad:
        print("BAD", len(bad), sorted({b[0] for b in bad}), bad[:2]); sys.exit(1)
    print("OK", 0, [])

main()
