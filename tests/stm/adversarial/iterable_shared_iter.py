"""A shared iterable whose ``__iter__`` hands out its one underlying iterator.

Serial invariant: each call takes the next job with ``for job in FEED: ...
break``; over K calls the jobs taken are exactly 0..K-1, each once.

Attacks: ``for`` over an object that is not itself an iterator: the engine
lets Python call ``FEED.__iter__()``, which returns a shared iterator made
at import (not the section's own), and the loop then consumes it in place
in an optimistic section: an aborted attempt's item is gone for good.
"""

import transaction

K = 300


class Feed:
    def __init__(self, n):
        self._it = iter(range(n))

    def __iter__(self):
        return self._it


FEED = Feed(10 * K)
taken = []
stats = {"n": 0}


def take(i):
    for job in FEED:
        stats["n"] += 1          # every call conflicts with every other one
        taken.append(job)
        break


def main():
    for i in range(K):
        transaction.add(take, i)
    transaction.run()
    bad = []
    if sorted(taken) != list(range(K)):
        bad.append(("taken", len(taken), "distinct", len(set(taken)), "max", max(taken)))
    print("BAD" if bad else "OK", bad)


main()
