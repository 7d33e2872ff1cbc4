"""Methods whose result C tests, bound without a ``def`` of their name: a lambda, a function under another name, a ``partialmethod``, an assignment after the class statement.

A token moves between two shared lists. Readers reach them only through
what such a method returns, where no barrier of the caller stands:
``k in (LAM,)`` (C calls ``bool()`` on ``__eq__``'s result), ``k in
(PART,)`` (a ``partialmethod`` of a module function), ``k in TREE``
(``__contains__`` bound to a function under another name), a ``with``
whose ``__exit__`` is set on the class after its statement.
Serial invariant: exactly one list holds the token.
Attacks: ``barriers.compared`` wrapped the returns of ``def __eq__`` and
its kin only; ``__eq__ = lambda ...`` in the class body returned the
shared list unseen (red-team round 32, finding 3).
"""
from functools import partialmethod

import transaction

H = {"a": ["tok"], "b": []}
BADS = []


def _holds(self, k):
    return H[k]


def _holds_with(self, k, default):
    return H.get(k, default)


class Lam:
    __eq__ = lambda self, k: H[k]      # noqa: E731 (the form under test)
    __hash__ = object.__hash__


class Part:
    __eq__ = partialmethod(_holds_with, default=[])
    __hash__ = object.__hash__


class Tree:
    if H:
        __contains__ = _holds


class Ctx:
    def __init__(self, k):
        self.k = k

    def __enter__(self):
        return self


def _exit(self, *exc):
    return H[self.k]


Ctx.__exit__ = _exit
LAM = Lam()
PART = Part()
TREE = Tree()


def mover(i):
    a = H["a"]
    b = H["b"]
    if a:
        b.append(a.pop())
    else:
        a.append(b.pop())


def held(k, form):
    if form == 0:
        return k in (LAM,)
    if form == 1:
        return k in (PART,)
    if form == 2:
        return k in TREE
    try:
        with Ctx(k):
            raise KeyError(k)
    except KeyError:
        return False
    return True


def reader(i):
    form = i % 4
    if held("a", form) + held("b", form) != 1:
        BADS.append((form, i))


for i in range(6000):
    transaction.add(mover, i)
    transaction.add(reader, i)
transaction.run()
print("OK" if not BADS else "BAD", len(BADS), BADS[:5])
