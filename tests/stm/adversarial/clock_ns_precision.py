"""A journal of time.time_ns() stamps, each call stamping then doing some work.

Serial invariant: one clock, calls one after another: JOURNAL never decreases
(in integer nanoseconds, no tolerance).
Attacks: txn.read_clock converts every reading to float seconds (value * 1e-9)
before check_clock_order compares it; near 1.8e9 s a float's step is ~238 ns, so
two time_ns readings less than that apart compare equal and commit in either order.
Red-team round 17: BAD 1/5 on 4 threads (readings compared as float
seconds); they are now kept in integer nanoseconds.
"""
import sys
import time
import transaction

N = 4000
JOURNAL = []


def stamp(i):
    t = time.time_ns()
    x = 0
    for k in range((i * 7919) % 5 * 60):
        x += k
    JOURNAL.append(t)


def main():
    for i in range(N):
        transaction.add(stamp, i)
    transaction.run()
    back = [(JOURNAL[k - 1], JOURNAL[k]) for k in range(1, len(JOURNAL)) if JOURNAL[k] < JOURNAL[k - 1]]
    if back:
        print("BAD", len(back), "went back, e.g.", back[:3], [a - b for a, b in back[:3]]); sys.exit(1)
    print("OK", len(JOURNAL))


main()
