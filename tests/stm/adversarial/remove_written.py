"""Bins in a shared list: a section appends an item to a bin; when it reaches
3 items the bin is retired: ROWS.remove(bin) and DONE.append(bin), and a new
empty bin is added. Serial invariant: every item ends up in exactly one bin,
no bin retired twice, remove() never raises.

Attacks: list.remove(bin) of a bin the section has just appended to: the
identity search of a comparing list method given a container the section
wrote.
"""
import sys
import transaction

ROWS = [[] for _ in range(4)]
DONE = []
bad = []

def step(i):
    b = ROWS[i % len(ROWS)]
    b.append(i)
    if len(b) >= 3:
        try:
            ROWS.remove(b)
        except ValueError:
            bad.append(("remove ValueError", i, list(b))); return
        DONE.append(b)
        ROWS.append([])

def main():
    n = 400
    for i in range(n):
        transaction.add(step, i)
    transaction.run()
    items = [x for r in ROWS for x in r] + [x for r in DONE for x in r]
    if sorted(items) != list(range(n)):
        bad.append(("items", len(items), len(set(items))))
    if len(ROWS) != 4:
        bad.append(("rows", len(ROWS)))
    if bad:
        print("BAD", len(bad), sorted({b[0] for b in bad}), bad[:2]); sys.exit(1)
    print("OK", 0, [])

main()
