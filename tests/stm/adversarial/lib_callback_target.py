"""Hit counters: odd calls let a library helper count, asking an
application callback where (rtlib.add_via(lambda: STATS, "hits")), even
calls count with STATS["hits"] += 1.

Serial invariant: every call adds 1: STATS["hits"] == K at the end.

Attacks: library code run in place by an inevitable section writes a
shared dict that it got back from an application callback: reach.py walks
the callable and arguments, not what a lambda's globals hold, so the dict
is neither held nor versioned and optimistic counts commit over it.
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
import rtlib
import transaction

STATS = {"hits": 0}
K = 1000


def step(i):
    if i % 2:
        rtlib.add_via(lambda: STATS, "hits")
    else:
        STATS["hits"] += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if STATS["hits"] != K:
        print("BAD", STATS, K); sys.exit(1)
    print("OK", STATS)


main()
