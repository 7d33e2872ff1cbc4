"""A shared dataclass reset by calling its (generated) ``__init__`` again.

Serial invariant: counters move ``hits`` and ``misses`` up together; a
reset calls ``STATS.__init__()``, which sets both to 0; readers always see
``hits == misses``, and at the end they are equal.

Attacks: the dataclass's generated ``__init__`` (library Python, run
inevitably) wrote ``hits`` and ``misses`` in place without locking their
stripes or moving their versions, so a reader that read one before and one
after committed. Now an unknown call under W holds the stripes of the
attributes of the instances it reaches (and of the containers they hold), as
it did for containers (``calls.direct_call_reaching``).
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
