"""Writers stamp an attribute with ``time.monotonic_ns()`` after updating their key of a plain dict; readers log the stamp they see.

Serial invariant: the clock never goes back, so a reader sees the stamp of
the writer with the highest reading below its own, and the attribute ends
holding the highest stamp.

Attacks: a section overtaken by a later clock reader goes before it in the
serial order when independent; writes to other keys of one plain dict
commute. The attribute's name is chosen so that its stripe is the dict's
whole stripe (a collision of the version table any program may hit): the
stripe once counted as the dict's alone, and two writers of the attribute
swapped their order (red-team round 41, finding 1: 7 runs of 7 on 4
threads).
"""
import bisect
import time

import transaction
from tornado_stm.stm.versions import stripe_of_key, stripe_of_object

N = 4000
K = 64


class Board:
    pass


BOARD = Board()
D = {k: 0 for k in range(K)}
LOG = {i: None for i in range(N)}
NAME = next(f"f{n}" for n in range(1 << 24)
            if stripe_of_key(id(BOARD), f"f{n}") == stripe_of_object(id(D)))
setattr(BOARD, NAME, (0, -1))


def spin(n):
    t = 0
    for j in range(n):
        t += j
    return t


def writer(i):
    t = time.monotonic_ns()
    D[i % K] = D[i % K] + 1
    spin(100 + (i * 7919) % 3000)
    setattr(BOARD, NAME, (t, i))
    LOG[i] = ("w", t, None)


def reader(i):
    t = time.monotonic_ns()
    seen = getattr(BOARD, NAME)
    spin(100 + (i * 7919) % 300)
    LOG[i] = ("r", t, seen)


def main():
    for i in range(N):
        transaction.add(reader if i % 4 == 3 else writer, i)
    transaction.run()
    written = sorted(LOG[i][1] for i in range(N) if LOG[i][0] == "w")
    stamps = set(written)
    stale = 0
    for kind, t, seen in LOG.values():
        if kind == "r" and t not in stamps:
            j = bisect.bisect_left(written, t)
            if seen[0] != (written[j - 1] if j else 0):
                stale += 1
    last = getattr(BOARD, NAME)[0] == written[-1]
    if stale == 0 and last:
        print("OK", N, "calls; the attribute follows the clock order")
    else:
        print("BAD", stale, "readers saw another stamp than the latest earlier one;",
              "the last stamp is", "kept" if last else "NOT the highest")


main()
