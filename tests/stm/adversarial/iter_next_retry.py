"""A shared ``itertools.count()`` ticket dispenser, in sections that all conflict.

Serial invariant: the ids handed out are exactly ``0..K-1`` and
``stats["n"] == K``.

Attacks: shared iterators under aborts. Every call also bumps one shared
counter, so optimistic sections conflict and retry: an aborted attempt that
had already advanced the iterator would lose an id on every retry (a shared
``count()`` lost ids on every abort before the engine made such sections
inevitable).
"""

import itertools

import transaction

K = 400
counter = itertools.count()
issued = []
stats = {"n": 0}


def take(i):
    number = next(counter)
    stats["n"] += 1
    issued.append(number)


def main():
    for i in range(K):
        transaction.add(take, i)
    transaction.run()
    bad = []
    if sorted(issued) != list(range(K)):
        bad.append(("ids not 0..K-1", "max", max(issued), "distinct", len(set(issued)),
                    "n", len(issued)))
    if stats["n"] != K:
        bad.append(("n", stats["n"]))
    print("BAD" if bad else "OK", bad)


main()
