"""Interning names to ids with ``defaultdict(itertools.count().__next__)``.

Serial invariant: each call looks up one of 150 names in ``IDS`` (a new name
gets the counter's next value) and bumps a shared counter ``lookups``; the
ids handed out are exactly ``0 .. len(IDS) - 1``, each once.

Attacks: the factory is a C method-wrapper bound to a shared iterator,
called by ``defaultdict.__missing__`` in C when a key is missing: nothing
makes the section inevitable before the iterator advances, so an aborted
attempt (the shared ``lookups`` counter makes sections conflict) consumes
an id for nothing, and the retry takes the next one.
"""
import itertools
import collections
import transaction

IDS = collections.defaultdict(itertools.count().__next__)
lookups = 0
K = 600


def step(i):
    global lookups
    name = "n%d" % ((i * 7) % 150)
    x = IDS[name]
    lookups += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    ids = sorted(IDS.values())
    if ids != list(range(len(IDS))) or lookups != K:
        print("BAD ids", len(IDS), "names, max id", ids[-1], "lookups", lookups)
    else:
        print("OK", len(IDS), lookups)


main()
