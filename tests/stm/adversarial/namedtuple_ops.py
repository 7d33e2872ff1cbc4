"""Ordinary operations on namedtuples (and a tuple subclass) held in globals,
in sections: ==, <, +, f-string, `in` a list.

Serial invariant (plain Python): every check below is True, none raises.
Attacks: barriers.view / deep_view hand an iterable that is neither a builtin
container nor immutable-by-type (a tuple SUBCLASS) to _read_in_place, which
replaces it by iter(obj).
Red-team round 17: wrong on every run (also before this session): view()
handed operators, comparisons and formatting an iterator over the object;
they now read it through barriers.operand, which keeps the object.
"""
import sys
from collections import namedtuple
import transaction

Point = namedtuple("Point", "x y")
P = Point(1, 2)
Q = Point(1, 2)
R = Point(3, 4)
PTS = [Point(1, 2)]
RESULTS = {}


def check(i):
    checks = {
        "eq": lambda: P == Q,
        "ne": lambda: not (P != Q),
        "lt": lambda: P < R,
        "add": lambda: P + (5,) == (1, 2, 5),
        "fstr": lambda: f"{P}" == "Point(x=1, y=2)",
        "in": lambda: P in PTS,
        "tuple_eq": lambda: P == (1, 2),
    }
    name = sorted(checks)[i % len(checks)]
    try:
        RESULTS[name] = checks[name]()
    except Exception as e:
        RESULTS[name] = repr(e)


def main():
    for i in range(7):
        transaction.add(check, i)
    transaction.run()
    bad = {k: v for k, v in RESULTS.items() if v is not True}
    if bad or len(RESULTS) != 7:
        print("BAD", bad); sys.exit(1)
    print("OK", RESULTS)


main()
