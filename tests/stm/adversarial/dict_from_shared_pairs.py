"""A shared list of shared [key, value] pairs whose values move between the
pairs; calls build dicts from it, in turn with dict(PAIRS), d.update(PAIRS),
OrderedDict(PAIRS), defaultdict(int, PAIRS), and through an iterator, a
generator, a starred display, a values view or a copy of the list; movers
build one right after their own move.

Serial invariant: every dict built totals T, and a mover's dict shows the
values the mover itself just wrote.
Attacks: dict's C constructor and update() unpack each pair themselves: they
read the live pairs, neither the section's copies (own writes missed) nor
recorded reads (torn totals). Each pair is now handed over as the section
reads it (calls._pairs_as_read). Red-team round 20 (dict_pairs_torn,
nested_pairs_forms, dict_pairs_routes).
"""
import collections
import sys
import transaction

K = 10
PAIRS = [["k%d" % i, 100] for i in range(K)]
T = 100 * K
BAD = []


HOLD = {"k%d" % i: pair for i, pair in enumerate(PAIRS)}


def built(i):
    form = i % 10
    if form == 0:
        return dict(PAIRS)
    if form == 1:
        d = {}
        d.update(PAIRS)
        return d
    if form == 2:
        return collections.OrderedDict(PAIRS)
    if form == 3:
        return collections.defaultdict(int, PAIRS)
    if form == 4:
        return dict(iter(PAIRS))
    if form == 5:
        return dict(p for p in PAIRS)
    if form == 6:
        return dict([*PAIRS])
    if form == 7:
        d = {}
        d.update(p for p in PAIRS)
        return d
    if form == 8:
        return dict(HOLD.values())
    return dict(list(PAIRS))


def move(i):
    a, b = i % K, (i * 7 + 3) % K
    if a == b:
        return
    PAIRS[a][1] -= 1
    x = 0
    for j in range(100):
        x += j
    PAIRS[b][1] += 1
    d = built(i)
    if d["k%d" % a] != PAIRS[a][1] or d["k%d" % b] != PAIRS[b][1] or sum(d.values()) != T:
        BAD.append(("own", i, d["k%d" % a], PAIRS[a][1]))


def audit(i):
    total = sum(built(i).values())
    if total != T:
        BAD.append(("audit", i, total))


def main():
    for i in range(600):
        transaction.add(move if i % 3 else audit, i)
    transaction.run()
    if BAD or sum(v for _, v in PAIRS) != T:
        print("BAD", len(BAD), BAD[:3])
        sys.exit(1)
    print("OK", T)


main()
