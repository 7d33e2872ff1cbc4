"""Round-robin routing with a shared ``itertools.cycle`` and a shared tally.

Serial invariant: ``K`` picks from a cycle of 4 servers pick each exactly
``K / 4`` times.

Attacks: shared iterators. ``next()`` on an iterator made outside the
section changes it in place and cannot be undone: an aborted and retried
section would skip a server. Advancing a shared iterator must make the
section inevitable.
"""

import itertools
from collections import Counter

import transaction

SERVERS = ["s0", "s1", "s2", "s3"]
K = 400
servers = itertools.cycle(SERVERS)
picks = Counter()
stats = {"n": 0}


def route(i):
    server = next(servers)
    stats["n"] += 1             # every call conflicts with every other one
    picks[server] += 1


def main():
    for i in range(K):
        transaction.add(route, i)
    transaction.run()
    ok = all(picks[s] == K // len(SERVERS) for s in SERVERS) and stats["n"] == K
    print("OK" if ok else "BAD", dict(picks), stats)


main()
