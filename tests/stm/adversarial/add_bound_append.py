"""A bound method of a shared list queued directly: ``transaction.add(LOG.append, i)``.

Serial invariant: each queued append runs once: ``LOG`` ends with exactly
the K values 0..K-1.

Attacks: a queued callable that is not instrumented runs in place, and an
abort of its section (a conflict, or an injected fault) retries it: the
append is made again.
"""

import transaction

K = 3000
LOG = []


def main():
    for i in range(K):
        transaction.add(LOG.append, i)
    transaction.run()
    bad = []
    if sorted(LOG) != list(range(K)):
        bad.append(("LOG", len(LOG), "distinct", len(set(LOG))))
    print("BAD" if bad else "OK", bad)


main()
