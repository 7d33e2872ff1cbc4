"""An auto-vivifying ``dict`` subclass: ``__missing__`` stores a new list into ``self``.

Serial invariant: every call appends one item, so the lists hold ``K``
items in all and every key ``0..7`` is present.

Attacks: container subclasses that override methods: ``__missing__``, called
from C by ``dict.__getitem__``, stores into the dict itself; on a private
stand-in copy those stores were lost (every write).
"""

import transaction


class AutoDict(dict):
    def __missing__(self, key):
        self[key] = value = []
        return value


registry = AutoDict()
K = 40


def add(i):
    registry[i % 8].append(i)


def main():
    for i in range(K):
        transaction.add(add, i)
    transaction.run()
    n = sum(len(v) for v in registry.values())
    print("OK" if n == K and sorted(registry) == list(range(8)) else "BAD",
          "items", n, "expected", K, "keys", sorted(registry))


main()
