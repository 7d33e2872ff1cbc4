"""Counters nested in a read-only view: VIEW = MappingProxyType({"counters": COUNTERS});
odd calls let a library helper bump VIEW["counters"]["hits"], even calls do
COUNTERS["hits"] += 1.

Serial invariant: every call adds 1: COUNTERS["hits"] == K.
Attacks: reach.reached_state does not look into a MappingProxyType argument,
so the nested dict the library writes in place is neither held nor versioned.
Red-team round 17: BAD 2/2 with faults. reach follows a MappingProxyType
to the dict it shows.
"""
import os
import sys
import types
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
import rtlib
import transaction

COUNTERS = {"hits": 0}
VIEW = types.MappingProxyType({"counters": COUNTERS})
K = 1000


def step(i):
    if i % 2:
        rtlib.bump_nested(VIEW, "counters", "hits")
    else:
        COUNTERS["hits"] += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if COUNTERS["hits"] != K:
        print("BAD", COUNTERS, K); sys.exit(1)
    print("OK", COUNTERS)


main()
