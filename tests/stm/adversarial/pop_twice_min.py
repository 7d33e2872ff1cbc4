"""Minimal: one section pops one iterator from a shared list / deque / set.
Serial invariant: pop() removes exactly one item and returns the last (first) one.
Attacks: calls.call_reading calls a mutator again when its result is an iterator (_is_lazy).
"""
import collections
import sys
import transaction

L = [iter([1]), iter([2]), iter([3])]
Q = collections.deque([iter([1]), iter([2]), iter([3])])
R = {}


def sec():
    R["list"] = (next(L.pop()), len(L))


def sec2():
    R["deque"] = (next(Q.popleft()), len(Q))


transaction.add(sec)
transaction.add(sec2)
transaction.run()
ok = R == {"list": (3, 2), "deque": (1, 2)}
print("OK" if ok else "BAD", R)
sys.exit(0 if ok else 1)
