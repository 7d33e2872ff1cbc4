"""A journal stamped with time.time() by some calls and time.time_ns() by others.

Serial invariant: entries taken in serial order (a shared sequence number)
carry non-decreasing stamps: both functions read the same wall clock
(CLOCK_REALTIME), so a later call never stamps earlier than an earlier one
(tolerance 1 microsecond for the float's rounding).
Attacks: the engine places clock readings in the serial order per clock
*function* (txn.COMMITTED_CLOCK_READINGS is keyed by the function), so
readings of one clock through two functions are not ordered against each
other.
Red-team round 16: BAD 2/2 on 2 threads with faults. Readings are now
ordered per clock (txn.CLOCK_SOURCES), in seconds.
"""
import sys
import time
import transaction

N = 3000
seq = [0]
journal = []


def stamp(i):
    if i % 2:
        t = time.time_ns()
    else:
        t = int(time.time() * 1e9)
    x = 0
    for k in range(300):
        x += k
    n = seq[0]
    seq[0] = n + 1
    journal.append((n, t))


def main():
    for i in range(N):
        transaction.add(stamp, i)
    transaction.run()
    journal.sort()
    back = [(a, b) for a, b in zip(journal, journal[1:]) if b[1] < a[1] - 1000]
    if back:
        print("BAD", len(back), "went back, e.g.", back[0]); sys.exit(1)
    print("OK", len(journal))


main()
