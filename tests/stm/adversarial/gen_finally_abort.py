"""A generator made in a section and dropped half-way (no explicit close):
its ``finally`` bumps a hot shared counter as the generator is collected.
Other sections turn inevitable (an irrevocable flush) and write the same
counter, and sections abort and retry around them.
Serial invariant: every user section's generator is closed exactly once,
so ``closed`` equals the number of user sections and ``n`` counts every
bump.

Attacks: finalizers of objects an attempt made, when the attempt turns
inevitable (it kept its registry of what it made until the Transaction
object went, so the ``finally`` ran after the section, or was lost),
aborts while a commit drops the registry, and the cyclic GC collecting
another section's garbage meanwhile.
"""
import sys, io, os
INEV = os.environ.get('INEV', '1') == '1'
import transaction

HOT = {"n": 0, "closed": 0}
ITEMS = list(range(10))
bad = []


def gen():
    try:
        for x in ITEMS:
            yield x
    finally:
        HOT["closed"] += 1
        HOT["n"] += 1


def user(i):
    g = gen()
    next(g)
    next(g)
    HOT["n"] += 1
    del g
    HOT["n"] += 0


def inev(i):
    HOT["n"] += 1
    sys.stdout.flush()          # irrevocable
    for _ in range(200):
        HOT["n"] += 0


def main():
    N = 400
    for i in range(N):
        transaction.add(user, i)
        if i % 3 == 0 and INEV:
            transaction.add(inev, i)
    transaction.run()
    ninev = len([i for i in range(N) if i % 3 == 0]) if INEV else 0
    if HOT["closed"] != N or HOT["n"] != 2 * N + ninev:
        bad.append(("count", HOT, N, ninev))
    if bad:
        print("BAD", len(bad), bad[:3]); sys.exit(1)
    print("OK")

main()
