"""Special methods bound to C methods of a shared dict where the rewriter cannot see the binding, a module ``__getattr__`` bound so, and a library ``__iter__`` read by a ``for`` loop.

Facades over one dict: ``setattr(Cls, "__getitem__", COUNTS.__getitem__)``
and ``type(...)`` at the top level, a class decorator, ``staticmethod``,
``functools.partial`` and ``types.MethodType`` wrappers; this module's own
``__getattr__ = COUNTS.get`` read as ``ME.n``; ``Facade.__getitem__`` used
through the class as a key function; a ``UserDict`` subclass iterated by
``for`` while other calls add keys.
Serial invariants: every read sees the call's own write just before it
(so ``COUNTS["n"]`` counts every call), no call raises, and a ``for`` loop
over the UserDict counts as many keys as ``len()`` gives.
Attacks: round 33's fix wrapped only the assignments the rewriter sees
(and made ``Facade.__getitem__`` bind like a function); the module's
``__getattr__`` and the library ``__iter__`` ran on the live dict (red-team
round 34).
"""
import functools
import sys
import types
from collections import UserDict

import transaction

N = 1200
COUNTS = {"n": 0}
MISSES = []
ME = sys.modules[__name__]
__getattr__ = COUNTS.get


class BySetattr:
    pass


setattr(BySetattr, "__getitem__", COUNTS.__getitem__)
ByType = type("ByType", (), {"__getitem__": COUNTS.__getitem__})


def facade_of(table):
    def decorate(cls):
        cls.__getitem__ = table.__getitem__
        return cls
    return decorate


@facade_of(COUNTS)
class ByDecorator:
    pass


class ByStatic:
    __getitem__ = staticmethod(COUNTS.__getitem__)
    __len__ = staticmethod(functools.partial(len, COUNTS))


class ByMethodType:
    __getitem__ = types.MethodType(dict.__getitem__, COUNTS)


class Facade:
    __getitem__ = COUNTS.__getitem__


class Bag(UserDict):
    pass


BAG = Bag()
FACADES = [BySetattr(), ByType(), ByDecorator(), ByStatic(), ByMethodType()]


def bump(i):
    COUNTS["n"] += 1
    seen = [facade["n"] for facade in FACADES] + [ME.n, Facade.__getitem__("n")]
    if any(value != COUNTS["n"] for value in seen) or len(FACADES[3]) != len(COUNTS):
        MISSES.append(("own write", i))
    BAG[i] = i


def reader(i):
    try:
        keys = 0
        for _ in BAG:
            keys += 1
    except RuntimeError as exc:
        MISSES.append(("iteration", repr(exc)))
        return
    if keys != len(BAG):
        MISSES.append(("torn", i))
    if sorted(["n"], key=Facade.__getitem__) != ["n"]:
        MISSES.append(("key", i))


for i in range(N):
    transaction.add(bump, i)
    transaction.add(reader, i)
transaction.run()
if COUNTS["n"] != N:
    MISSES.append(("lost updates", COUNTS["n"]))
print("OK" if not MISSES else "BAD", len(MISSES), MISSES[:5])
