"""Rebinding an application function's __defaults__ / __kwdefaults__ (a common
configuration trick, also what functools-style patching does), then calling it
from sections. Serial invariant: calls use the new defaults: TOTAL == N*111.
Red-team round 18: wrong on every run. __defaults__/__kwdefaults__ set on an
application function reach the function its entry wrapper calls.
Attacks: the entry wrapper standing in for an application function: its
__defaults__/__kwdefaults__ were set, the function called kept its own.
"""
import sys
import transaction

TOTAL = [0]


def price(a, b=2, *, c=3):
    return a + b + c


def step(i):
    TOTAL[0] += price(1)


def main():
    price.__defaults__ = (10,)
    price.__kwdefaults__ = {"c": 100}
    print("defaults seen:", price.__defaults__, price.__kwdefaults__)
    for i in range(10):
        transaction.add(step, i)
    transaction.run()
    if TOTAL[0] != 10 * 111:
        print("BAD", TOTAL[0]); sys.exit(1)
    print("OK")


main()
