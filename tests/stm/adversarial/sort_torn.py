"""A shared board of [score, name] lists: bumper sections add points to one
entry in place (no sort); sorter sections only call BOARD.sort(reverse=True)
then read the order back. No section sorts after its own write.
Serial invariant: right after a sorter's sort(), the scores it reads are in
descending order.

Attacks: list.sort() of a shared list whose items other sections change in
place: the comparisons read the items in C and must be recorded as reads, or
the sorter commits an order built from old values.
"""
import sys
import transaction

BOARD = [[0, "p%d" % k] for k in range(12)]
bad = []

def bumper(i):
    e = BOARD[(i * 7) % 12]
    e[0] += 1 + (i % 5)

def sorter(i):
    BOARD.sort(reverse=True)
    scores = [e[0] for e in BOARD]
    if scores != sorted(scores, reverse=True):
        bad.append(("not sorted after sort()", i, scores))

def step(i):
    (bumper if i % 2 else sorter)(i)

def main():
    n = 2000
    for i in range(n):
        transaction.add(step, i)
    transaction.run()
    if sum(e[0] for e in BOARD) != sum(1 + (i % 5) for i in range(1, n, 2)):
        bad.append(("total", sum(e[0] for e in BOARD)))
    if bad:
        print("BAD", len(bad), sorted({b[0] for b in bad}), bad[:2]); sys.exit(1)
    print("OK", 0, [])

main()
