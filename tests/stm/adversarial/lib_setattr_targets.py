"""Library code sets attributes of a class, a module and a SimpleNamespace in place.

Serial invariant: every call adds 1 to one of three counters (a class
attribute, a module global, a SimpleNamespace attribute), reading it
first; half the calls write through ``functools.partial(setattr, ...)``,
which the engine does not instrument, the other half plainly. After K
calls each counter holds K // 3 (or K // 3 + 1) and they sum to K.
Attacks: unknown code run in place by an inevitable section (the
partial) writing state that is not a container or an application
instance, whose stripes nobody held or bumped, so an optimistic section
that read the old value committed over it.
"""
import functools
import sys
import types

import transaction

K = 900


class Cfg:
    n = 0


HITS = 0
NS = types.SimpleNamespace(n=0)
TARGETS = [
    (lambda: Cfg.n, functools.partial(setattr, Cfg, "n")),
    (lambda: HITS, functools.partial(setattr, sys.modules[__name__], "HITS")),
    (lambda: NS.n, functools.partial(setattr, NS, "n")),
]


def bump(i):
    global HITS
    read, write = TARGETS[i % 3]
    value = read()
    for _ in range(500):
        pass
    if i % 2:
        write(value + 1)
    elif i % 3 == 0:
        Cfg.n = value + 1
    elif i % 3 == 1:
        HITS = value + 1
    else:
        NS.n = value + 1


def main():
    for i in range(K):
        transaction.add(bump, i)
    transaction.run()
    counts = (Cfg.n, HITS, NS.n)
    print("OK" if counts == (K // 3,) * 3 else "BAD", counts, K)


main()
