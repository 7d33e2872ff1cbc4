"""A shared list of lists whose items move between the inner lists; calls
read the nesting through itertools' C code: ``accumulate(ROWS)`` (running
concatenation), ``accumulate(ROWS, operator.add)``, ``accumulate(SETS,
operator.or_)``, ``groupby(ROWS, key=len)``, and the truth of each list
(``filter(None, ROWS)``, ``compress``, ``takewhile(bool, ...)``,
``filterfalse(None, ...)``, also through a generator or an iterator); movers read right after their own move,
audits read only.

Serial invariant: the running concatenation's last value holds every item
exactly once (ITEMS of them), in the order the call itself reads the lists
in; the running unions are the unions of the sets as the call reads them;
groupby's lengths are the lists' lengths as the call reads them.
Attacks: C code (accumulate's additions, groupby's key, an operator handed
over) read the inner lists and sets past the barriers: the section's own
move was missed (every run) and a concurrent one torn. Red-team round 20
(accumulate_own, accumulate_torn, nested_own_forms2, nested_pure_own,
nested_truth_forms, filter_none_torn).
"""
import itertools
import operator
import sys
import transaction

ITEMS = 12
ROWS = [list(range(0, 6)), list(range(6, 12)), []]
SETS = [set(range(0, 6)), set(range(6, 12)), set()]
BAD = []


def reads(i, who):
    form = i % 4
    if form == 0:
        flat = list(itertools.accumulate(ROWS))[-1]
        if flat != ROWS[0] + ROWS[1] + ROWS[2]:
            BAD.append((who, i, "accumulate order", flat))
    elif form == 1:
        flat = list(itertools.accumulate(ROWS, operator.add))[-1]
        if flat != ROWS[0] + ROWS[1] + ROWS[2]:
            BAD.append((who, i, "accumulate add order", flat))
    elif form == 2:
        unions = list(itertools.accumulate(SETS, operator.or_))
        flat = sorted(unions[-1])
        if unions[0] != SETS[0] or unions[1] != SETS[0] | SETS[1]:
            BAD.append((who, i, "accumulate or_", unions[:2]))
    elif form == 3 and i % 8 == 7:
        # the truth of each row, taken by C code
        truth = [bool(r) for r in ROWS]
        got = (len(list(filter(None, ROWS))), len(list(itertools.compress("abc", ROWS))),
               len(list(itertools.takewhile(bool, ROWS))), len(list(itertools.filterfalse(None, ROWS))),
               len(list(filter(None, (r for r in ROWS)))), list(map(len, iter(ROWS))))
        want = (sum(truth), sum(truth), truth.index(False) if False in truth else 3,
                3 - sum(truth), sum(truth), [len(r) for r in ROWS])
        if got != want:
            BAD.append((who, i, "truth", got, want))
        return
    else:
        lengths = [k for k, _ in itertools.groupby(ROWS, key=len)]
        want = [k for k, _ in itertools.groupby([len(r) for r in ROWS])]
        if lengths != want:
            BAD.append((who, i, "groupby", lengths, want))
        return
    if sorted(flat) != list(range(ITEMS)):
        BAD.append((who, i, form, sorted(flat)))


def move(i):
    src, dst = i % 3, (i + 1) % 3
    if ROWS[src]:
        item = ROWS[src].pop()
        x = 0
        for j in range(200):
            x += j
        ROWS[dst].append(item)
    if SETS[src]:
        item = SETS[src].pop()
        SETS[dst].add(item)
    reads(i, "own")


def audit(i):
    reads(i, "audit")


def main():
    for i in range(400):
        transaction.add(move if i % 3 else audit, i)
    transaction.run()
    if BAD:
        print("BAD", len(BAD), BAD[:3])
        sys.exit(1)
    print("OK", [len(r) for r in ROWS])


main()
