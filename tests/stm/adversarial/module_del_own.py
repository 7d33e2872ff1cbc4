"""A module-level cache dropped with ``del module.cache`` and tested with
``hasattr`` / ``getattr(module, "cache", None)`` in the same call (seventh round).

Serial invariant: right after the ``del`` the module has no ``cache``, so every
call records (False, None).

Attacks: a section's own deletion of a module attribute. The read barrier
took the KeyError of its redo log for "ask the module" and read the committed
value; it now answers as the section sees the module (its ``__getattr__``,
or AttributeError).
"""
import sys

import transaction

K = 200
out = []
cache = None
me = sys.modules[__name__]


def job(i):
    me.cache = {"i": i}
    del me.cache
    out.append((hasattr(me, "cache"), getattr(me, "cache", None)))
    me.cache = None


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    ok = out == [(False, None)] * K
    print("OK" if ok else "BAD %r" % out[:3])


main()
