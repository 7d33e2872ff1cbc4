"""Library functions queued directly: ``transaction.add(bisect.insort, L, x)``.

Serial invariant: each queued ``bisect.insort(SCORES, x)`` runs alone, so
``SCORES`` ends sorted with all K values.

Attacks: a queued call whose function is not instrumented (a library
function, not the application's): it must still run as an atomic section
(inevitably, if nothing else), not as plain code on the worker threads.
``insort`` bisects, then inserts: two at once put values out of order.
"""

import bisect

import transaction

K = 3000
SCORES = []


def main():
    for i in range(K):
        transaction.add(bisect.insort, SCORES, (i * 7919) % K)
    transaction.run()
    bad = []
    if SCORES != sorted(SCORES) or len(SCORES) != K:
        bad.append(("unsorted or lost", len(SCORES),
                    sum(1 for a, b in zip(SCORES, SCORES[1:]) if a > b)))
    print("BAD" if bad else "OK", bad)


main()
