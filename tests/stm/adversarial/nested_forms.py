"""Uninstrumented readers of shared lists nested in their arguments, after the section wrote them.

Serial invariant: each form below runs in a section of its own right after
one write (``rows[0][0] = 7``, ``groups["a"].append(1)``, or ``a.append(9)``
and ``marks.add(5)``), and gives the value that write implies: the sums of
the rows, the lengths of the lists, the copy, the string. One thread
suffices.

Attacks: values nested in the arguments of uninstrumented readers. A
builtin such as ``sum``, ``max``, ``map(len, ...)``, ``zip(*rows)``,
``heapq.nsmallest(..., key=sum)``, ``str``, ``json.dumps`` or ``==`` gets
the outer container through a barrier but reaches the lists inside it in C,
past the barriers, where the section's buffered writes are not: the engine
must hand it the section's view of the nested lists too (or run it
inevitably). Three shapes: lists nested in a shared list (``rows``), in a
shared dict (``groups``), and in a container the section makes itself
(``[a, b]``, which needs no barrier of its own but holds shared lists).
Each form has its own section, so that a form that makes the section
inevitable does not hide the ones after it.
"""

import collections
import copy
import functools
import heapq
import itertools
import json
import math
import operator
import statistics

import transaction

rows = [[0, 0], [1, 1]]
groups = {"a": [], "b": []}
a = [1, 2]
b = [3]
marks = {1}
bad = []


def set_row():                  # rows == [[7, 0], [1, 1]]
    rows[0][0] = 7


def grow_group():               # groups == {"a": [1], "b": []}
    groups["a"].append(1)


def grow_lists():               # a == [1, 2, 9], b == [3], marks == {1, 5}
    a.append(9)
    marks.add(5)


def lens_of_pair():
    pair = [a, b]               # a local holding the section's own list
    return list(map(len, pair))


#: (form, the write before it, the form as a function, its serial value)
CASES = [
    # shared lists nested in a shared list
    ("sum(map(sum, rows))", set_row, lambda: sum(map(sum, rows)), 9),
    ("max(map(max, rows))", set_row, lambda: max(map(max, rows)), 7),
    ("set(map(tuple, rows))", set_row, lambda: set(map(tuple, rows)), {(7, 0), (1, 1)}),
    ("list(chain.from_iterable(rows))", set_row,
     lambda: list(itertools.chain.from_iterable(rows)), [7, 0, 1, 1]),
    ("list(zip(*rows))", set_row, lambda: list(zip(*rows)), [(7, 1), (0, 1)]),
    ("dict(enumerate(map(sum, rows)))", set_row,
     lambda: dict(enumerate(map(sum, rows))), {0: 7, 1: 2}),
    ("math.fsum(map(sum, rows))", set_row, lambda: math.fsum(map(sum, rows)), 9.0),
    ("tuple(rows[0])", set_row, lambda: tuple(rows[0]), (7, 0)),
    ("[sum(r) for r in rows]", set_row, lambda: [sum(r) for r in rows], [7, 2]),
    ("list(map(list, rows))", set_row, lambda: list(map(list, rows)), [[7, 0], [1, 1]]),
    ("str(rows)", set_row, lambda: str(rows), "[[7, 0], [1, 1]]"),
    ("rows == ...", set_row, lambda: rows == [[7, 0], [1, 1]], True),
    ("list(rows) == ...", set_row, lambda: list(rows) == [[7, 0], [1, 1]], True),
    ("rows[:] == ...", set_row, lambda: rows[:] == [[7, 0], [1, 1]], True),
    ("rows.copy() == ...", set_row, lambda: rows.copy() == [[7, 0], [1, 1]], True),
    ("[*rows] == ...", set_row, lambda: [*rows] == [[7, 0], [1, 1]], True),
    ("statistics.mean(map(sum, rows))", set_row,
     lambda: statistics.mean(map(sum, rows)), 4.5),
    # ... read through key functions
    ("min(rows, key=sum)", set_row, lambda: min(rows, key=sum), [1, 1]),
    ("sorted(rows, key=sum)[0]", set_row, lambda: sorted(rows, key=sum)[0], [1, 1]),
    ("heapq.nsmallest(1, rows, key=sum)", set_row,
     lambda: heapq.nsmallest(1, rows, key=sum), [[1, 1]]),
    ("functools.reduce(max, map(sum, rows))", set_row,
     lambda: functools.reduce(max, map(sum, rows)), 7),
    ("filter(lambda r: sum(r) > 5, rows)", set_row,
     lambda: len(list(filter(lambda r: sum(r) > 5, rows))), 1),
    ("sum(r[0] for r in rows)", set_row, lambda: sum(r[0] for r in rows), 8),
    ("list(map(itemgetter(0), rows))", set_row,
     lambda: list(map(operator.itemgetter(0), rows)), [7, 1]),
    # shared lists as the values of a shared dict
    ("sum(map(len, groups.values()))", grow_group,
     lambda: sum(map(len, groups.values())), 1),
    ("any(groups.values())", grow_group, lambda: any(groups.values()), True),
    ("all(groups.values())", grow_group, lambda: all(groups.values()), False),
    ('len(groups["a"])', grow_group, lambda: len(groups["a"]), 1),
    ("[(k, len(v)) for k, v in sorted(groups.items())]", grow_group,
     lambda: [(k, len(v)) for k, v in sorted(groups.items())], [("a", 1), ("b", 0)]),
    ("sorted(groups.items())", grow_group,
     lambda: sorted(groups.items()), [("a", [1]), ("b", [])]),
    ("Counter(map(len, groups.values()))", grow_group,
     lambda: collections.Counter(map(len, groups.values())),
     collections.Counter({1: 1, 0: 1})),
    ("[len(v) for v in groups.values()]", grow_group,
     lambda: [len(v) for v in groups.values()], [1, 0]),
    ("list(groups.values())", grow_group, lambda: list(groups.values()), [[1], []]),
    ("json.dumps(groups)", grow_group, lambda: json.dumps(groups), '{"a": [1], "b": []}'),
    ("sorted(groups, key=lambda k: len(groups[k]))", grow_group,
     lambda: sorted(groups, key=lambda k: len(groups[k])), ["b", "a"]),
    # shared lists in a container the section makes
    ("sum([a], [])", grow_lists, lambda: sum([a], []), [1, 2, 9]),
    ("sum([a, b], [])", grow_lists, lambda: sum([a, b], []), [1, 2, 9, 3]),
    ("list(map(len, [a]))", grow_lists, lambda: list(map(len, [a])), [3]),
    ("list(map(len, [a, b]))", grow_lists, lambda: list(map(len, [a, b])), [3, 1]),
    ("list(map(len, pair))", grow_lists, lens_of_pair, [3, 1]),
    ("list(map(sum, (a, b)))", grow_lists, lambda: list(map(sum, (a, b))), [12, 3]),
    ("list(chain.from_iterable([a, b]))", grow_lists,
     lambda: list(itertools.chain.from_iterable([a, b])), [1, 2, 9, 3]),
    ("list(zip(*[a, a]))", grow_lists, lambda: list(zip(*[a, a])), [(1, 1), (2, 2), (9, 9)]),
    ("sorted([a, b], key=len)", grow_lists,
     lambda: [len(x) for x in sorted([a, b], key=len)], [1, 3]),
    ("max(a, b, key=len)", grow_lists, lambda: len(max(a, b, key=len)), 3),
    ("set().union(*[marks, {7}])", grow_lists,
     lambda: sorted(set().union(*[marks, {7}])), [1, 5, 7]),
    ("tuple(map(tuple, [a]))", grow_lists, lambda: tuple(map(tuple, [a])), ((1, 2, 9),)),
    ("functools.reduce(operator.concat, [a, b])", grow_lists,
     lambda: functools.reduce(operator.concat, [a, b]), [1, 2, 9, 3]),
    ("starmap(operator.add, [(a, b)])", grow_lists,
     lambda: list(itertools.starmap(operator.add, [(a, b)])), [[1, 2, 9, 3]]),
    ("heapq.merge(a, b)", grow_lists, lambda: list(heapq.merge(a, b)), [1, 2, 3, 9]),
    ("any(9 in x for x in [a, b])", grow_lists, lambda: any(9 in x for x in [a, b]), True),
    ("filter(None, [a, b])", grow_lists,
     lambda: [len(x) for x in filter(None, [a, b])], [3, 1]),
    ("max([a, b])", grow_lists, lambda: max([a, b]), [3]),
    ("min([a, b])", grow_lists, lambda: min([a, b]), [1, 2, 9]),
    ("sorted([b, a])", grow_lists, lambda: sorted([b, a]), [[1, 2, 9], [3]]),
    ("[a] == ...", grow_lists, lambda: [a] == [[1, 2, 9]], True),
    ("(a, b) == ...", grow_lists, lambda: (a, b) == ([1, 2, 9], [3]), True),
    ("[1, 2, 9] in [a, b]", grow_lists, lambda: [1, 2, 9] in [a, b], True),
    ("str([a])", grow_lists, lambda: str([a]), "[[1, 2, 9]]"),
    ("copy.deepcopy({'x': a})", grow_lists, lambda: copy.deepcopy({"x": a}), {"x": [1, 2, 9]}),
    ("Counter(map(len, [a, b, a]))", grow_lists,
     lambda: collections.Counter(map(len, [a, b, a])), collections.Counter({3: 2, 1: 1})),
    ("groupby(a, key=...)", grow_lists,
     lambda: [(k, list(g)) for k, g in itertools.groupby(a, key=lambda v: v > 1)],
     [(False, [1]), (True, [2, 9])]),
    ("tee(a, 2)", grow_lists, lambda: [list(t) for t in itertools.tee(a, 2)],
     [[1, 2, 9], [1, 2, 9]]),
    ("product(a, b)", grow_lists, lambda: len(list(itertools.product(a, b))), 3),
    ("enumerate([a, b])", grow_lists, lambda: [len(x) for _, x in enumerate([a, b])], [3, 1]),
    ("dict(zip('ab', map(len, [a, b])))", grow_lists,
     lambda: dict(zip("ab", map(len, [a, b]))), {"a": 3, "b": 1}),
    ("map(itemgetter(-1), [a, b])", grow_lists,
     lambda: list(map(operator.itemgetter(-1), [a, b])), [9, 3]),
    ("attrgetter('real')(len(a))", grow_lists, lambda: operator.attrgetter("real")(len(a)), 3),
]


def own(i):
    form, write, read, expected = CASES[i]
    write()
    got = read()
    if got != expected:
        bad.append((form, got))


def main():
    for i in range(len(CASES)):
        rows[:] = [[0, 0], [1, 1]]
        groups.clear()
        groups.update(a=[], b=[])
        a[:] = [1, 2]
        marks.clear()
        marks.add(1)
        transaction.add(own, i)
        transaction.run()
    print("BAD" if bad else "OK", len(bad), bad)


main()
