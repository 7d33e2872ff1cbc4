"""After `UL.data.append(i)` in a section (UL a shared UserList), consumers of
UL as an iterable: LST += UL, LST.extend(UL), [*UL], tuple(UL), sorted(UL), max(UL),
set(UL), sum(UL), dict.fromkeys(UL), list(zip(UL)), f(*UL), enumerate.
Serial invariant: every consumer sees i."""
import sys
from collections import UserList
import transaction

UL = UserList([0])
BAD = []


def ident(*a):
    return a


def step(i):
    UL.data.append(i)
    lst = []
    lst += UL
    lst2 = []
    lst2.extend(UL)
    got = {"iadd": i in lst, "extend": i in lst2, "star": i in [*UL], "tuple": i in tuple(UL),
           "sorted": i in sorted(UL), "max": max(UL) == i, "set": i in set(UL), "sum": sum(UL) == sum(UL.data),
           "fromkeys": i in dict.fromkeys(UL), "zip": (i,) in list(zip(UL)), "call": i in ident(*UL),
           "enum": i in [v for _, v in enumerate(UL)], "for": i in [v for v in UL]}
    bad = [k for k, v in got.items() if not v]
    if bad:
        BAD.append((i, bad))


def main():
    for i in range(1, 21):
        transaction.add(step, i)
    transaction.run()
    if BAD:
        print("BAD", len(BAD), BAD[:2]); sys.exit(1)
    print("OK")


main()
