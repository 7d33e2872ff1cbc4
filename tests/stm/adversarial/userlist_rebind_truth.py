"""A section replaces a shared UserList's/UserDict's .data with a new empty
container (rebinding), then tests truth/len/in/iteration.
Serial invariant: the section sees them empty.
Red-team round 18: wrong on every run; truth() reads a shared instance as
operators do (barriers.operand).
Attacks: truth() handing a library instance to bool() (UserList.__len__
reads UL.data past the barriers).
"""
import sys
from collections import UserList, UserDict
import transaction

UL = UserList([1, 2, 3])
UD = UserDict({1: 1})
BAD = []


def step(i):
    UL.data = []
    UD.data = {}
    got = {"notUL": not UL, "notUD": not UD, "lenUL": len(UL) == 0, "lenUD": len(UD) == 0,
           "in": 1 not in UL and 1 not in UD, "list": list(UL) == [], "dict": dict(UD) == {},
           "eq": UL == [] and UD == {}, "fmt": f"{UL}{UD}" == "[]{}"}
    bad = [k for k, v in got.items() if not v]
    if bad:
        BAD.append((i, bad))
    UL.data = [1, 2, 3]
    UD.data = {1: 1}


def main():
    for i in range(10):
        transaction.add(step, i)
    transaction.run()
    if BAD:
        print("BAD", len(BAD), BAD[:2]); sys.exit(1)
    print("OK")


main()
