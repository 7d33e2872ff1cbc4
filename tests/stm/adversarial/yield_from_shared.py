"""A generator the section makes that delegates to a shared iterator with ``yield from``.

Serial invariant: each call takes one job from the shared iterator through
its own delegating generator; over K calls the jobs taken are exactly
0..K-1, each once.

Attacks: ``yield from FEED`` in a generator the section made (private, so
advanced optimistically): the delegation consumes the shared iterator in
place, which no abort can undo.
"""

import transaction

K = 300
FEED = iter(range(10 * K))
taken = []
stats = {"n": 0}


def one_from_feed():
    yield from FEED


def take(i):
    job = next(one_from_feed())
    stats["n"] += 1              # every call conflicts with every other one
    taken.append(job)


def main():
    for i in range(K):
        transaction.add(take, i)
    transaction.run()
    bad = []
    if sorted(taken) != list(range(K)):
        bad.append(("taken", len(taken), "distinct", len(set(taken)), "max", max(taken)))
    print("BAD" if bad else "OK", bad)


main()
