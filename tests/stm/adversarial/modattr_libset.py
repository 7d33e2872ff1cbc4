"""A module tally rebound by a library function rtlib.set_on(ME, "hits", v).

Serial invariant: every call adds 1 to hits: hits == N at the end.
Attacks: a plainly-read global rebound by setattr in a library function
run in place (reach held the module's keys, not RESHAPE_STRIPE).
Red-team round 17: BAD 1/1 on 2 threads (fixed as modattr_partial).
"""
import os
import sys
import transaction

N = 1000
hits = 0
ME = sys.modules[__name__]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
import rtlib


def bump(i):
    cur = hits
    x = 0
    for k in range(300):
        x += k * i
    rtlib.set_on(ME, "hits", cur + 1)


def main():
    for i in range(N):
        transaction.add(bump, i)
    transaction.run()
    if hits != N:
        print("BAD hits", hits, "!=", N)
        sys.exit(1)
    print("OK", hits)


main()
