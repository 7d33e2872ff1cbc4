"""What the special-method audit must leave as plain Python has it: class decorators that return no class, a library ``__iter__`` read lazily, a facade reached only through its instance.

``@REGISTRY.append`` (a decorator returning None) and a decorator returning
an instance run as in plain Python; a ``for`` loop over a shared
``UserList`` worklist sees the items the loop itself appends, and one that
breaks at the first item never reads the item after it (which raises);
``REG = type("Registry", (), {"__getitem__": COUNTS.__getitem__})()`` at
the top level reads what the section wrote just before.
Serial invariants: no call raises; each worklist call drains what it
appends; every call sees its own write through the facade, so
``COUNTS["n"]`` counts every call.
Attacks: round 34's audit called ``vars()`` on whatever a class statement
made, and made ``for`` over a library ``__iter__`` read ``list(obj)``
first (eagerly: no appended items, the raising item read); a class only
an instance of which is a module global was never audited (red-team
round 35).
"""
from collections import UserList

import transaction

N = 800
COUNTS = {"n": 0}
REGISTRY = []
PROBLEMS = []


@REGISTRY.append
class Plugin:
    pass


def instance_of(cls):
    return cls()


@instance_of
class Settings:
    __slots__ = ()


class Lazy(UserList):
    def __getitem__(self, index):
        if index == 1:
            raise LookupError("read past the break")
        return super().__getitem__(index)


WORK = UserList()
LAZY = Lazy([0, 1])
REG = type("Registry", (), {"__getitem__": COUNTS.__getitem__})()


def bump(i):
    COUNTS["n"] += 1
    if REG["n"] != COUNTS["n"]:
        PROBLEMS.append(("own write", i))


def worklist(i):
    WORK.append(i)
    drained = 0
    for item in WORK:
        drained += 1
        if item == i and drained < 3:
            WORK.append(-1)           # seen by this very loop in plain Python
    if drained != len(WORK):
        PROBLEMS.append(("worklist", drained, len(WORK)))
    WORK.clear()


def first(i):
    try:
        for item in LAZY:
            break
    except LookupError as exc:
        PROBLEMS.append(("eager", repr(exc)))


for i in range(N):
    transaction.add(bump, i)
    transaction.add(worklist if i % 2 else first, i)
transaction.run()
if [c.__name__ for c in REGISTRY] != ["Plugin"] or Plugin is not None \
        or type(Settings).__name__ != "Settings":
    PROBLEMS.append(("decorators", REGISTRY, Plugin))
if COUNTS["n"] != N:
    PROBLEMS.append(("lost updates", COUNTS["n"]))
print("OK" if not PROBLEMS else "BAD", len(PROBLEMS), PROBLEMS[:5])
