"""A leaderboard kept as a shared list of [score, name] lists: a section adds
points to one entry in place, then re-sorts the board (board.sort(reverse=True))
and reads the leader; another board of dataclass(order=True) entries is
handled the same way.
Serial invariant: right after the sort, the board is in descending score
order and board[0] holds the maximum score.

Attacks: list.sort() of a shared list whose items (lists,
dataclass(order=True) entries) the section has just written: sort compares the
items in C, past the barriers.
"""
import sys
from dataclasses import dataclass, field
import transaction

BOARD = [[0, "p%d" % k] for k in range(8)]

@dataclass(order=True)
class Entry:
    score: int
    name: str = field(compare=False)

BOARD2 = [Entry(0, "p%d" % k) for k in range(8)]
bad = []

def step(i):
    entry = BOARD[(i * 5) % 8]
    entry[0] += 1 + (i % 4)
    BOARD.sort(reverse=True)
    scores = [e[0] for e in BOARD]
    if scores != sorted(scores, reverse=True):
        bad.append(("list board not sorted after sort()", i, scores))
    e2 = BOARD2[(i * 3) % 8]
    e2.score += 1 + (i % 4)
    BOARD2.sort(reverse=True)
    s2 = [e.score for e in BOARD2]
    if s2 != sorted(s2, reverse=True):
        bad.append(("dataclass board not sorted after sort()", i, s2))

def main():
    n = 200
    for i in range(n):
        transaction.add(step, i)
    transaction.run()
    want = sum(1 + (i % 4) for i in range(n))
    if sum(e[0] for e in BOARD) != want or sum(e.score for e in BOARD2) != want:
        bad.append(("final", sum(e[0] for e in BOARD), sum(e.score for e in BOARD2)))
    if bad:
        print("BAD", len(bad), sorted({b[0] for b in bad}), bad[:2]); sys.exit(1)
    print("OK", 0, [])

main()
