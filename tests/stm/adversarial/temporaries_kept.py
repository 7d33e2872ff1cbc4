"""One section (or a few) doing ordinary CPU work that makes many short-lived small
containers: a loop building a temporary list/dict/set per step and dropping it.
Serial invariant: the result is right and memory stays flat (plain Python frees each
temporary at once): peak RSS grows by less than 100 MB.
Attacks: objects a section makes are registered as private (tx.adopt / _stm_new keep
a strong reference in tx.private until the section ends): every temporary of a long
section stays alive.
"""
import os
import resource
import sys
import transaction

STEPS = int(os.environ.get("N", "600000"))
OUT = {}


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def crunch(k):
    total = 0
    for i in range(STEPS):
        tmp = [i, i + 1]
        d = {"a": i}
        total += len(tmp) + d["a"] % 3
    OUT[k] = total


def main():
    base = rss_mb()
    transaction.add(crunch, 0)
    transaction.run()
    grew = rss_mb() - base
    want = sum(2 + i % 3 for i in range(STEPS))
    ok = OUT[0] == want and grew < 100
    print("OK" if ok else "BAD", OUT[0] == want, "peak RSS grew %.0f MB" % grew)
    if os.environ.get("STATS"):
        from tornado_stm import stm as _s
        d = _s.stats(); d.pop("threads", None); print("STATS", d)
    return 0 if ok else 1


sys.exit(main())
