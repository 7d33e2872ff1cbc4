"""Two accounts (a dataclass: generated __repr__/__eq__, uninstrumented) moved
between by every call; then the call formats the pair as held by several
immutable holders (tuple, frozenset, namedtuple, frozenset of tuples, tuple in a
frozenset in a dict, a tuple subclass) with several formatters, and records the
snapshot.

Serial invariant: every snapshot shows a + b == TOTAL (the call's own transfer
included) and the final balances sum to TOTAL.
Attacks: nested immutable holders of mutable application objects read by
uninstrumented formatters in a section that wrote them (C fast path
holds_values/flat_immutable_values, calls.record_nested).
Red-team round 17: wrong on every run (also before this session): view()
handed operators, comparisons and formatting an iterator over the object;
they now read it through barriers.operand, which keeps the object.
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
HOLDERS = [
    (A, B),
    frozenset({A, B}),
    NT(A, B),
    frozenset({(A,), (B,)}),
    {"k": frozenset({A, B})},
    Pair((A, B)),
    ((A,), frozenset({(B,)})),
]
READERS = [
    repr,
    str,
    lambda h: f"{h}",
    lambda h: "%s" % (h,),
    lambda h: "{}".format(h),
    lambda h: "{0!r}".format(h),
    lambda h: str([h]),
    lambda h: repr({1: h}),
    lambda h: "".join(map(repr, [h])),
    lambda h: "-".join([str(h)]),
]
SNAPS = []
NUM = re.compile(r"bal=(-?\d+)")


def move(i):
    amt = (i % 7) + 1
    if i % 2:
        A.bal -= amt
        B.bal += amt
    else:
        B.bal -= amt
        A.bal += amt
    h = HOLDERS[i % len(HOLDERS)]
    r = READERS[(i // len(HOLDERS)) % len(READERS)]
    SNAPS.append((i % len(HOLDERS), (i // len(HOLDERS)) % len(READERS), r(h)))


def peek(i):
    h = HOLDERS[i % len(HOLDERS)]
    r = READERS[(i * 3) % len(READERS)]
    SNAPS.append((i % len(HOLDERS), (i * 3) % len(READERS), r(h)))


def main():
    n = 1400
    for i in range(n):
        transaction.add(move if i % 3 else peek, i)
    transaction.run()
    bad = []
    for hk, rk, s in SNAPS:
        vals = [int(v) for v in NUM.findall(s)]
        if len(vals) != 2 or sum(vals) != TOTAL:
            bad.append((hk, rk, s))
    if A.bal + B.bal != TOTAL or bad:
        print("BAD", A, B, len(bad), sorted({(hk, rk) for hk, rk, _ in bad}), bad[:2]); sys.exit(1)
    print("OK", len(SNAPS))


main()
