"""Whole-structure readers auditing shared state while transfers and swaps change it.

Serial invariants: the balances total 800; ``names`` is a permutation of
the keys of ``balances``; ``nested["x"]`` and ``nested["y"]`` each sum to 100.
Audits check them through ``json.dumps``, ``copy.deepcopy``, ``copy.copy``,
``str.join``, ``sum``/``min``/``max``/``sorted`` over generators and with a
key, ``dict(...)``/``list(...)``, ``zip`` and ``enumerate``.

Attacks: deep reads by uninstrumented code (``json.dumps`` and ``deepcopy``
are deep reads, which make the section inevitable) and readers that consume
a shared container in C; every one must see one consistent snapshot that
includes the section's own writes.
"""

import copy
import json

import transaction

N = 8
balances = {f"a{k}": 100 for k in range(N)}
names = [f"a{k}" for k in range(N)]
nested = {"x": [50, 50], "y": {"p": 30, "q": 70}}
bad = []


def spin():
    x = 0
    for j in range(100):
        x += j
    return x


def transfer(i):
    a, b = names[i % N], names[(i * 3 + 2) % N]
    balances[a] -= 7
    spin()
    balances[b] += 7


def swap(i):
    j, k = i % N, (i * 5 + 1) % N
    names[j], names[k] = names[k], names[j]


def nested_moves(i):
    nested["x"][0] -= 1
    spin()
    nested["x"][1] += 1
    nested["y"]["p"] += 1
    spin()
    nested["y"]["q"] -= 1


def deep_audit(i):
    decoded = json.loads(json.dumps(balances))
    if sum(decoded.values()) != 800:
        bad.append(("json", sum(decoded.values())))
    deep = copy.deepcopy(nested)
    if sum(deep["x"]) != 100 or sum(deep["y"].values()) != 100:
        bad.append(("deepcopy", deep))


def reader_audit(i):
    if sum(copy.copy(balances).values()) != 800:
        bad.append(("copy",))
    joined = ",".join(names)
    if sorted(joined.split(",")) != sorted(balances):
        bad.append(("join", joined))
    if sum(balances[n] for n in names) != 800:
        bad.append(("sum gen",))
    low, high = min(balances[n] for n in names), max(balances.values())
    if low * N > 800 or high * N < 800:
        bad.append(("minmax", low, high))
    if sum(balances[n] for n in sorted(names, key=lambda n: balances[n])) != 800:
        bad.append(("sorted key",))
    if sum(dict(balances).values()) != 800 or len(list(names)) != N:
        bad.append(("dict/list",))
    if sum(v for _, v in zip(names, (balances[n] for n in names))) != 800:
        bad.append(("zip",))
    if sum(balances[n] for _, n in enumerate(names)) != 800:
        bad.append(("enumerate",))
    if sum(x for x in nested["x"]) != 100:
        bad.append(("nested",))


CALLS = [transfer, swap, nested_moves, deep_audit, transfer, reader_audit]


def main():
    for i in range(900):
        transaction.add(CALLS[i % len(CALLS)], i)
    transaction.run()
    deep_audit(0)
    reader_audit(0)
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
