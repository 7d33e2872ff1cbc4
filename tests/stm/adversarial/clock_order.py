"""Events stamped with ``time.monotonic_ns()`` and appended to a shared journal.

Serial invariant: calls run one after another and the clock never goes
back, so the journal's timestamps are in non-decreasing order (each call
reads the clock, does some work, then appends its stamp).

Attacks: clock reads were re-executable and conflict-free, so two calls
running side by side could read the clock in one order and commit in the
other. Now the readings of each clock are kept to the commit, and a
section whose reading is below one already committed aborts.
"""
import time
import transaction

K = 2000
JOURNAL = []


def spin(n):
    t = 0
    for j in range(n):
        t += j
    return t


def step(i):
    stamp = time.monotonic_ns()
    spin(500)
    JOURNAL.append(stamp)


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    back = sum(1 for a, b in zip(JOURNAL, JOURNAL[1:]) if b < a)
    print("OK" if back == 0 and len(JOURNAL) == K else "BAD", back, "steps back of", len(JOURNAL))


main()
