"""A slow key ``__eq__`` (a loop of 1100 steps) runs while a call's dict write is published.

Serial invariant: 200 calls each add 1 to a total and rewrite one of 8
keys of a registry with a new, equal key: the total is 200 and the
registry keeps 8 keys.

Attacks: the same publication path as key_hash_publish, with an ``__eq__``
long enough that the barriers' periodic re-validation (every 1024 reads)
happens inside it while the committing section holds its stripes.
"""

import transaction


class Key:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        r = 0
        for _ in range(1100):
            r += self.n
        return isinstance(other, Key) and self.n == other.n

    def __hash__(self):
        return hash(self.n)


K = 200
total = {"v": 0}
registry = {Key(i): 0 for i in range(8)}


def job(i):
    total["v"] += 1
    registry[Key(i % 8)] = i


def main():
    bad = []
    for i in range(K):
        transaction.add(job, i)
    try:
        transaction.run()
    except Exception as exc:
        bad.append(("raised", repr(exc)))
    if total["v"] != K or len(registry) != 8:
        bad.append(("counted", total["v"], len(registry)))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
