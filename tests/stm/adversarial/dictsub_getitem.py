"""A shared ``dict`` subclass whose ``__getitem__`` counts lookups in an attribute.

Serial invariant: each call makes exactly one counted lookup, so
``d.hits == K`` at the end.

Attacks: container subclasses that override methods. The engine stands in a
private copy for a shared container a section changes; a copy of a subclass
would bypass (or run twice) the overriding method, so the section must rerun
inevitably instead. ``len(d)`` after the store and the counted lookup must
both act on the real object once.
"""

import transaction


class HitDict(dict):
    def __init__(self):
        super().__init__()
        self.hits = 0

    def __getitem__(self, key):
        self.hits += 1
        return super().__getitem__(key)


d = HitDict()
d["base"] = 0
K = 40


def work(i):
    d[i] = i
    size = len(d)
    return d["base"], size


def main():
    for i in range(K):
        transaction.add(work, i)
    transaction.run()
    print("OK" if d.hits == K else "BAD", "hits", d.hits, "expected", K)


main()
