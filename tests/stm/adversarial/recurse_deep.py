"""Deep recursion after raising the recursion limit, as a tree walk might.

Serial invariant: with ``sys.setrecursionlimit(20000)``, ``walk(8000)``
returns 8001 (plain Python frames need no C stack in 3.11+).
Attacks: every instrumented call went through the C call barrier, a C frame
each, so deep recursion hit the C recursion limit near depth 4000 (a
RecursionError no serial run raises). A function's call of its own name now
gets the function from barriers.recursive_callee and calls it from its own
frame. Red-team round 13.
"""
import sys
import transaction

sys.setrecursionlimit(20000)
DEPTH = 8000
TOTAL = {"t": 0}
NODE = {"v": 1}


def walk(n):
    if n == 0:
        return NODE["v"]
    return 1 + walk(n - 1)


def step(i):
    TOTAL["t"] += walk(DEPTH)


def main():
    for i in range(8):
        transaction.add(step, i)
    transaction.run()
    print("OK" if TOTAL["t"] == 8 * (DEPTH + 1) else "BAD", TOTAL)


main()
