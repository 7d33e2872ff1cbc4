"""A class reshaped back and forth by library setattr while other calls read it.

Serial invariant: a switch call sets Cfg.rate and Cfg.label to the same
version v (rate: a plain value v or a property giving v; label: a method
returning v or a staticmethod giving v), through
``functools.partial(setattr, Cfg, ...)``; readers always see
``C.rate == C.label()``.
Attacks: a class whose names change kind (value to property, method to
staticmethod) by unknown code run in place: the cached attribute kinds
must be dropped and every overlapping reader abort (RESHAPE_STRIPE), as
for an instrumented ``Cfg.rate = property(...)``.
"""
import functools

import transaction

K = 1500


class Cfg:
    rate = 0

    def label(self):
        return 0


C = Cfg()
SET_RATE = functools.partial(setattr, Cfg, "rate")
SET_LABEL = functools.partial(setattr, Cfg, "label")
torn = []


def switch(v):
    if v % 2:
        SET_RATE(property(lambda s: v))
        for _ in range(200):
            pass
        SET_LABEL(staticmethod(lambda: v))
    else:
        SET_RATE(v)
        for _ in range(200):
            pass
        SET_LABEL(lambda self: v)


def read(i):
    r = C.rate
    for _ in range(200):
        pass
    lab = C.label()
    if r != lab:
        torn.append((i, r, lab))


def step(i):
    if i % 5 == 0:
        switch(i // 5 + 1)
    else:
        read(i)


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    print("OK" if not torn else "BAD", len(torn), torn[:4])


main()
