"""f-string of a namedtuple (a tuple subclass) held in a global.

Serial invariant (plain Python): f"{P}" == repr(P) == "NT(x=1, y=2)".
Attacks: the f-string value barrier on a tuple subclass.
Red-team round 17: wrong on every run (also before this session): view()
handed operators, comparisons and formatting an iterator over the object;
they now read it through barriers.operand, which keeps the object.
"""
import sys
from collections import namedtuple
import transaction

NT = namedtuple("NT", "x y")
P = NT(1, 2)
OUT = []


def show(i):
    OUT.append(f"{P}")


def main():
    transaction.add(show, 0)
    transaction.run()
    if OUT != [repr(P)]:
        print("BAD", OUT, "!=", [repr(P)]); sys.exit(1)
    print("OK", OUT)


main()
