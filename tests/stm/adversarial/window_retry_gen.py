"""Readers combine a shared set (or list) with a generator of their own in one C call
(`S.union(gen)`, `S.issuperset(gen)`, `S.isdisjoint(gen)`, `dict.fromkeys`...), while
writers keep adding/removing other elements of the same set. The generator is slow
(it does a little work per item), so writers commit while the C call runs.
Serial invariant: every reader sees all 8 of its generator's items in the union
(len(S.union(gen) & MINE) == 8), S.issuperset(gen) / S.isdisjoint(gen) answer as for the
stable items 0..19; no BAD entries.
Attacks: a pure C call on a shared container the section did not write runs in a
version window (calls._read_window / Transaction.versioned); when the container's
version moved during the call, the call is made AGAIN -- with the section's generator
already used up by the first call.
"""
import os
import sys
import transaction

FORM = os.environ.get("FORM", "union")
S = set(range(20))
L = list(range(20))
D = dict.fromkeys(range(20))
MINE = set(range(100, 108))
BAD = []


def slow(x):
    y = 0
    for j in range(150):
        y += j
    return x


def reader(i):
    if FORM == "union":
        u = S.union(slow(x) for x in range(100, 108))
        got = len(u & MINE)
        if got != 8:
            BAD.append((i, got))
    elif FORM == "superset":
        if S.issuperset(slow(x) for x in range(0, 10)) is not True or \
                S.issuperset(slow(x) for x in range(100, 102)) is not False:
            BAD.append((i, "superset"))
    elif FORM == "isdisjoint":
        if S.isdisjoint(slow(x) for x in range(0, 3)) is not False:
            BAD.append((i, "isdisjoint"))
    elif FORM == "list_index":
        # L.index(x, start, stop) cannot take a generator; use sum over zip-free form
        got = L.count(slow(5))
        if got != 1:
            BAD.append((i, got))
    elif FORM == "intersection":
        got = S.intersection(slow(x) for x in range(0, 10))
        if len(got) != 10:
            BAD.append((i, len(got)))
    elif FORM == "symdiff":
        got = S.symmetric_difference(slow(x) for x in range(100, 105))
        if not set(range(100, 105)) <= got:
            BAD.append((i, "symdiff"))
    elif FORM == "issubset":
        if S.issubset(slow(x) for x in range(0, 60)) is not True:
            BAD.append((i, "issubset"))
    elif FORM == "keys_or":
        got = D.keys() | (slow(x) for x in range(100, 105))
        if not set(range(100, 105)) <= got:
            BAD.append((i, "keys_or"))
    elif FORM == "product":
        import itertools
        got = list(itertools.product(L[:3], (slow(x) for x in range(3))))
        if len(got) != 9:
            BAD.append((i, len(got)))
    elif FORM == "difference":
        d = S.difference(slow(x) for x in range(0, 10))
        if any(x < 10 for x in d):
            BAD.append((i, sorted(d)[:5]))


def writer(i):
    k = 20 + i % 30
    if k in S:
        S.discard(k)
    else:
        S.add(k)
    L.append(k)
    L.remove(k)
    if k in D:
        del D[k]
    else:
        D[k] = i


def main():
    for i in range(600):
        transaction.add(reader if i % 2 == 0 else writer, i)
    transaction.run()
    print("BAD" if BAD else "OK", FORM, len(BAD), BAD[:5])
    return 1 if BAD else 0


sys.exit(main())
