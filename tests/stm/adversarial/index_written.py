"""A shared list of lists; a section appends to one inner list, then finds it
again in the outer list by identity-ish C methods (index, in, count, remove).
Serial invariant: ROWS.index(q) finds q, `q in ROWS` is True, ROWS.count(q) >= 1.

Attacks: the identity search of list, deque and tuple methods (index, count,
remove): after q.append(x) the section's copy of q is not the q the outer list
holds, so a call handed the copy finds nothing, and one handed the original
compares the old contents.
"""
import sys
import transaction

ROWS = [[] for _ in range(6)]
bad = []

def step(i):
    q = ROWS[i % len(ROWS)]
    q.append(i)
    try:
        k = ROWS.index(q)
    except ValueError:
        bad.append(("index ValueError", i)); return
    if ROWS[k] is not q:
        bad.append(("index wrong", i, k))
    if q not in ROWS:
        bad.append(("not in", i))
    if ROWS.count(q) < 1:
        bad.append(("count 0", i))

def main():
    for i in range(300):
        transaction.add(step, i)
    transaction.run()
    total = sum(len(r) for r in ROWS)
    if total != 300:
        bad.append(("total", total))
    if bad:
        print("BAD", len(bad), sorted({b[0] for b in bad}), bad[:2]); sys.exit(1)
    print("OK", 0, [])

main()
