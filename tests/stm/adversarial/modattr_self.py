"""A module-level tally rebound through the module object itself.

Serial invariant: every call adds 1 to ``hits``: at the end hits == N.
Attacks: ``setattr(sys.modules[__name__], ...)`` rebinds a global of the
instrumented module without a ``global`` statement, so reads of ``hits``
in the module's functions are plain (not barriered): found by red-team
round 16 (lost updates 2/2 on 2 and 4 threads).
"""
import sys
import transaction

N = 2000
hits = 0
ME = sys.modules[__name__]


def bump(i):
    cur = hits
    x = 0
    for k in range(300):
        x += k * i
    setattr(ME, "hits", cur + 1)


def main():
    for i in range(N):
        transaction.add(bump, i)
    transaction.run()
    if hits != N:
        print("BAD hits", hits, "!=", N)
        sys.exit(1)
    print("OK", hits)


main()
