"""A shared min-heap of [deadline, name] lists: postponer sections push one
entry's deadline later in place and re-heapify; popper sections pop the
earliest entry, check it against every other entry, and push it back with
a later deadline. Also bisect.insort into a sorted list of [key] lists whose
keys other sections raise in place (then re-sort).
Serial invariant: a pop returns the minimum deadline; bisect.insort keeps
the list sorted when it was sorted before.

Attacks: heapq.heapify / heappop / heappush of a shared heap of lists that
other sections change in place and re-heapify: the items compared in C must be
read consistently.
"""
import sys
import heapq
import bisect
import transaction

HEAP = [[k, "t%d" % k] for k in range(10)]
heapq.heapify(HEAP)
bad = []

def postpone(i):
    e = HEAP[(i * 3) % len(HEAP)]
    e[0] += 7
    heapq.heapify(HEAP)

def popper(i):
    e = heapq.heappop(HEAP)
    m = min(x[0] for x in HEAP)
    if e[0] > m:
        bad.append(("pop not min", i, e[0], m))
    e[0] += 5
    heapq.heappush(HEAP, e)

def step(i):
    (postpone if i % 2 else popper)(i)

def main():
    n = 1500
    for i in range(n):
        transaction.add(step, i)
    transaction.run()
    if len(HEAP) != 10:
        bad.append(("size", len(HEAP)))
    if bad:
        print("BAD", len(bad), sorted({b[0] for b in bad}), bad[:2]); sys.exit(1)
    print("OK", 0, [])

main()
