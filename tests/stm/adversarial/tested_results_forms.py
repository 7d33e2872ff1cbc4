"""Results the interpreter or C code tests itself: ``__contains__``, ``__exit__``, a UserList from ``__eq__``, ``in`` over application iterables, ``"fmt" % key``.

A token moves between two shared lists (and, mirrored, two lists a writer
keeps equal). Readers reach them only through values the interpreter or C
code uses where no barrier of the caller stands: ``k in TREE`` (C calls
``bool()`` on what ``__contains__`` returns), a ``with`` whose ``__exit__``
returns the list (is the exception swallowed?), ``k in (ULT,)`` with
``__eq__`` returning a ``UserList`` over the list (its ``__len__`` is library
code), ``x in Seq()`` / ``x in iter([y])`` (C compares the needle with the
items an iterable hands out), and ``"a" % KEY`` with a str subclass whose
``__rmod__`` runs first.
Serial invariant: exactly one list holds the token; mirrored lists are equal.
Attacks: ``barriers.compared`` covered only rich comparisons returning
builtin containers; ``contains`` answered iterables (private ones too, in C)
without looking at what C compares; ``"fmt" % x`` was taken for a string
whatever x was (red-team round 32).
"""
from collections import UserList

import transaction

H = {"a": ["tok"], "b": []}
M = {"x": [0] * 30, "y": [0] * 30}
BADS = []


class Tree:
    def __contains__(self, k):
        return H[k]


class UL:
    def __eq__(self, k):
        u = UserList()
        u.data = H[k]
        return u

    __hash__ = object.__hash__


class Ctx:
    def __init__(self, k):
        self.k = k

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return H[self.k]


class Seq:
    def __iter__(self):
        yield M["y"]


class Key(str):
    def __rmod__(self, fmt):
        return H[fmt]


TREE = Tree()
ULT = UL()
KEY = Key("k")


def mover(i):
    a = H["a"]
    b = H["b"]
    if a:
        b.append(a.pop())
    else:
        a.append(b.pop())
    x = M["x"]
    y = M["y"]
    for j in range(30):
        x[j] = i
        y[j] = i


def held(k, form):
    if form == 0:
        return k in TREE
    if form == 1:
        try:
            with Ctx(k):
                raise KeyError(k)
        except KeyError:
            return False
        return True
    if form == 2:
        return k in (ULT,)
    a = k % KEY
    return bool(a)


def reader(i):
    form = i % 5
    if form == 4:
        if not (M["x"] in Seq() and M["x"] in iter([M["y"]])):
            BADS.append((form, i))
    elif held("a", form) + held("b", form) != 1:
        BADS.append((form, i))


for i in range(6000):
    transaction.add(mover, i)
    transaction.add(reader, i)
transaction.run()
print("OK" if not BADS else "BAD", len(BADS), BADS[:5])
