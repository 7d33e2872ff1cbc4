"""A module tally rebound through functools.partial(setattr, ME, "hits").

Serial invariant: every call adds 1 to hits: hits == N at the end.
Attacks: a plainly-read global rebound by setattr called through a partial
(reach holds the module's keys, not RESHAPE_STRIPE).
Red-team round 17: BAD 3/3 on 2 threads. reach now holds RESHAPE_STRIPE
for a module whose functions read some globals plainly.
"""
import functools
import sys
import transaction

N = 1000
hits = 0
ME = sys.modules[__name__]
SET_HITS = functools.partial(setattr, ME, "hits")


def bump(i):
    cur = hits
    x = 0
    for k in range(300):
        x += k * i
    SET_HITS(cur + 1)


def main():
    for i in range(N):
        transaction.add(bump, i)
    transaction.run()
    if hits != N:
        print("BAD hits", hits, "!=", N)
        sys.exit(1)
    print("OK", hits)


main()
