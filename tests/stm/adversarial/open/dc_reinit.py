"""A shared dataclass reset by calling its (generated) ``__init__`` again.

Serial invariant: counters move ``hits`` and ``misses`` up together; a
reset calls ``STATS.__init__()``, which sets both to 0; readers always see
``hits == misses``, and at the end they are equal.
"""
import dataclasses
import transaction

K = 4000
bad = []


@dataclasses.dataclass
class Stats:
    hits: int = 0
    misses: int = 0


STATS = Stats()


def spin(n):
    t = 0
    for j in range(n):
        t += j
    return t


def step(i):
    k = i % 10
    if k == 0:
        STATS.__init__()
    elif k < 5:
        STATS.hits += 1
        spin(50)
        STATS.misses += 1
    else:
        h = STATS.hits
        spin(100)
        m = STATS.misses
        if h != m:
            bad.append((i, h, m))


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if STATS.hits != STATS.misses:
        bad.append(("final", STATS.hits, STATS.misses))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
