"""Hot-patching an application function by assigning __code__ (a reload/mocking
idiom), then calling it from sections. Serial invariant: calls run the new code:
TOTAL == N * 100; no exception.
Red-team round 18: wrong on every run; f.__code__ read or set in application
code is the function's own, not its entry wrapper's.
Attacks: the entry wrapper standing in for an application function: its
__code__ was set and read instead of the function's.
"""
import sys
import transaction

TOTAL = [0]


def price(a):
    return a + 1


def cheap(a):
    return a * 100


def step(i):
    TOTAL[0] += price(1)


def main():
    try:
        price.__code__ = cheap.__code__
    except Exception as e:
        print("EXC at assign", repr(e))
    for i in range(10):
        transaction.add(step, i)
    transaction.run()
    if TOTAL[0] != 10 * 100:
        print("BAD", TOTAL[0]); sys.exit(1)
    print("OK")


main()
