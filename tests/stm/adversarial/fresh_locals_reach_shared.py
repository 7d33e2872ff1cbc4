"""Locals the rewriter knows the section made (displays, comprehensions) that
hold or read shared containers.

Three kinds of calls run mixed: ``table = {"a": LOG}; table["a"] += [i]``
appends through a dict display holding a shared list (others append to it
directly); ``snap = []; snap[:] = LOG`` copies the shared list and compares
its length with a counter the appenders bump after appending; ``rows = [r
for r in ROWS]; rows.sort()`` sorts shared rows that movers change, and
checks the order right away.
Serial invariant: LOG holds every appended number once; every copy has as
many items as the counter says; every sorted list of rows is in order.
Attacks: plain Python the rewriter emits for such locals: ``table[k] += v``
changed the shared list in place past the barriers (lost and doubled
appends); a slice assignment's source and ``list.sort`` compared the shared
containers' live contents (torn reads).
"""
import operator

import transaction

N = 300
LOG = []
COUNT = [0]
ROWS = [[(j * 37) % 50, j] for j in range(12)]
TORN = []


def spin(n=300):
    x = 0
    for j in range(n):
        x += j
    return x


def append_through_a_table(i):
    table = {"log": LOG}
    table["log"] += [i]
    spin()
    COUNT[0] += 1


def append_through_a_list(i):
    lists = [LOG]
    lists[0] += [i]
    spin()
    COUNT[0] += 1


def copy_and_count(i):
    snap = []
    snap[:] = LOG
    spin(2000)
    if len(snap) != COUNT[0]:
        TORN.append(("copy", len(snap), COUNT[0]))


def move_rows(i):
    a = ROWS[i % 12]
    b = ROWS[(i * 5 + 1) % 12]
    a[0] += 7
    b[0] -= 7


def rank_rows(i):
    rows = [row for row in ROWS]
    if i % 2:
        rows.sort()
    else:
        rows.sort(key=operator.itemgetter(0))
    spin(2000)
    if any(rows[j][0] > rows[j + 1][0] for j in range(len(rows) - 1)):
        TORN.append(("sort", i))


CALLS = [append_through_a_table, copy_and_count, move_rows, append_through_a_list, rank_rows]
for i in range(N):
    transaction.add(CALLS[i % len(CALLS)], i)
transaction.run()
appended = sorted(LOG)
expected = sorted(i for i in range(N) if i % 5 in (0, 3))
print(len(LOG), COUNT, TORN[:3])
print("OK" if appended == expected and COUNT[0] == len(expected) and not TORN else "BAD")
