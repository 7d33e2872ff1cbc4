"""A shared ``dict`` subclass whose ``__setitem__`` counts writes in an attribute.

Serial invariant: ``d.writes`` equals the number of stores, ``K``, and so
does ``len(d)``.

Attacks: container subclasses that override methods: the override must run
exactly once per committed store, on the real object, however often the
section aborted before.
"""

import transaction


class Tracked(dict):
    def __init__(self):
        super().__init__()
        self.writes = 0

    def __setitem__(self, key, value):
        self.writes += 1
        super().__setitem__(key, value)


d = Tracked()
K = 40


def put(i):
    d[i] = i


def main():
    for i in range(K):
        transaction.add(put, i)
    transaction.run()
    print("OK" if d.writes == K and len(d) == K else "BAD",
          "writes", d.writes, "len", len(d), "expected", K)


main()
