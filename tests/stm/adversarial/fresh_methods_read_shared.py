"""Methods of objects the call made itself (a dict, a list, a set built by
a display) given shared containers to read: ``d.update(D)``,
``l.extend(L)``, ``s.update(L)``, ``s.union(S)``, ``l.index(row)``; movers
call them right after their own move, audits only read.

Serial invariant: what the call's own object got is what the call reads of
the shared containers: their totals are the TOTAL, and a mover's copy shows
its own move.
Attacks: the rewriter calls a method of an object the call made without the
call barrier (nothing shared is written), but its arguments were handed over
as they are: C code read the shared containers live (the section's own
writes missed every run, a concurrent move torn). They are now read as
operands (the section's copy, the read recorded). Red-team round 20
(dict_pairs_torn, on the way).
"""
import sys
import transaction

D = {"a": 50, "b": 50}
L = [50, 50]
S = {("a", 50), ("b", 50)}
TOTAL = 100
BAD = []


def sums():
    d = {}
    d.update(D)
    l = []
    l.extend(L)
    s = set()
    s.update(S)
    u = set().union(S)
    return sum(d.values()), sum(l), sum(v for _, v in s), sum(v for _, v in u)


def move(i):
    k = 1 + i % 3
    D["a"] -= k
    L[0] -= k
    S.discard(("a", D["a"] + k))
    x = 0
    for j in range(200):
        x += j
    D["b"] += k
    L[1] += k
    S.discard(("b", D["b"] - k))
    S.add(("a", D["a"]))
    S.add(("b", D["b"]))
    d = {}
    d.update(D)
    l = []
    l.extend(L)
    if d["a"] != D["a"] or l[0] != L[0] or sums() != (TOTAL,) * 4:
        BAD.append(("own", i, d["a"], D["a"], l[0], L[0], sums()))


def audit(i):
    if sums() != (TOTAL,) * 4:
        BAD.append(("audit", i, sums()))


def main():
    for i in range(600):
        transaction.add(move if i % 3 else audit, i)
    transaction.run()
    if BAD:
        print("BAD", len(BAD), BAD[:3])
        sys.exit(1)
    print("OK", D)


main()
