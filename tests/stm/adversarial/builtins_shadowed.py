"""``for k in range(2)`` where ``range`` is not the builtin: a parameter, a local, a closure variable, a star import.

Each such ``range`` hands out the two shared lists a token moves between;
readers count the lists that hold something (``if k:``).
Serial invariant: exactly one list holds the token, so every reader counts one.
Attacks: the value analysis took a ``for`` variable over ``range(...)`` for
a number whenever the module did not bind ``range`` itself, so ``if k:`` ran
without its barrier: a local, parameter or closure variable named ``range``,
and names a star import brings (no symbol table lists them), were missed
(red-team round 31).
"""
import builtins
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
import transaction  # noqa: E402
from shadowing_builtins import *  # noqa: E402,F401,F403

BADS = []


def pair(n):
    return [H["a"], H["b"]]


def mover(i):
    a = H["a"]
    b = H["b"]
    if a:
        b.append(a.pop())
    else:
        a.append(b.pop())


def count(i, seen, form):
    if seen != 1:
        BADS.append((form, i))


def reader_param(i, range=pair):
    seen = 0
    for k in range(2):
        if k:
            seen += 1
    count(i, seen, "param")


def reader_local(i):
    range = pair
    seen = 0
    for k in range(2):
        if k:
            seen += 1
    count(i, seen, "local")


def make_closure():
    range = pair

    def reader_closure(i):
        seen = 0
        for k in range(2):
            if k:
                seen += 1
        count(i, seen, "closure")
    return reader_closure


def reader_star(i):
    seen = 0
    for k in range(2):          # shadowing_builtins.range
        if k:
            seen += 1
    count(i, seen, "star")


READERS = [reader_param, reader_local, make_closure(), reader_star]
for i in builtins.range(6000):
    transaction.add(mover, i)
    transaction.add(READERS[i % 4], i)
transaction.run()
print("OK" if not BADS else "BAD", len(BADS), BADS[:5])
