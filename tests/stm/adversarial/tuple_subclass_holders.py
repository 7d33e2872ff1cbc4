"""Two dataclass accounts held by a namedtuple and by a plain tuple subclass;
every call moves money between them and formats both holders with repr and
str (library code: the namedtuple's generated __repr__, tuple's C repr, the
dataclass's generated __repr__), peeks format them without moving.

Serial invariant: every formatted pair sums to TOTAL, and a move's own
formatting shows its own transfer (the balance it just wrote).
Attacks: tuple subclasses holding shared instances, read by uninstrumented
formatters (calls.record_nested walked exact tuples and frozensets only:
the section's own buffered writes were missed on every run, and a peek
recorded nothing, so a torn read of a concurrent commit went unchecked).
Red-team round 17 (immut_holders_readers), reduced.
"""
import re
import sys
from collections import namedtuple
from dataclasses import dataclass
import transaction


@dataclass(eq=False)
class Acct:
    name: str
    bal: int


class Pair(tuple):
    pass


NT = namedtuple("NT", "x y")
A = Acct("a", 500)
B = Acct("b", 500)
TOTAL = 1000
HOLDERS = [NT(A, B), Pair((A, B)), frozenset({NT(A, B)})]
SNAPS = []
NUM = re.compile(r"bal=(-?\d+)")


def move(i):
    amt = (i % 7) + 1
    A.bal -= amt
    B.bal += amt
    mine = A.bal
    h = HOLDERS[i % len(HOLDERS)]
    SNAPS.append((mine, repr(h) if i % 2 else str(h)))


def peek(i):
    SNAPS.append((None, repr(HOLDERS[i % len(HOLDERS)])))


def main():
    for i in range(900):
        transaction.add(move if i % 3 else peek, i)
    transaction.run()
    bad = []
    for mine, text in SNAPS:
        vals = [int(v) for v in NUM.findall(text)]
        if len(vals) != 2 or sum(vals) != TOTAL or (mine is not None and vals[0] != mine):
            bad.append((mine, text))
    if A.bal + B.bal != TOTAL or bad:
        print("BAD", A, B, len(bad), bad[:3])
        sys.exit(1)
    print("OK", len(SNAPS))


main()
