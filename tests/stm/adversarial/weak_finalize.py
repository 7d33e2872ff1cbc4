"""Connections released through ``weakref.finalize``, cached in a WeakValueDictionary (seventh round).

Serial invariant: every connection made is released once it is dropped, so
at the end released == made - alive, and the cache holds exactly the
connections the pool still holds.

Attacks: finalizer callbacks that run wherever the referent dies. A
connection dropped by one section's commit, or by a local of a section,
ran its callback inside that section: in one whose snapshot was stale the
callback's read raised AbortSection, CPython swallowed it ("Exception
ignored") and the release was lost (1477 of 1492 counted). The callback
now runs after that section, as a section of its own. One that fired while
an aborted attempt was dropped was taken for that attempt's own and
dropped with it (one run in three under faults): the finalize object, not
the dead referent, now tells whose it was.
"""
import gc
import weakref

import transaction

K = 1500
CACHE = weakref.WeakValueDictionary()
POOL = {}
C = {"made": 0, "released": 0}


class Conn:
    def __init__(self, i):
        self.i = i


def released(i):
    C["released"] += 1


def job(i):
    c = Conn(i)
    C["made"] += 1
    weakref.finalize(c, released, i)
    CACHE[i] = c
    POOL[i % 8] = c
    x = 0
    for k in range(50):
        x += k


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    gc.collect()
    got = (C["made"], C["released"], len(CACHE),
           sorted(CACHE.keys()) == sorted(c.i for c in POOL.values()))
    want = (K, K - 8, 8, True)
    print("OK" if got == want else "BAD (made, released, cache, cache==pool) %r want %r" % (got, want))


main()
