"""Shared objects with their own ``__hash__``/``__eq__`` key a shared dict that every call updates.

Serial invariant: 600 calls each add 1 to a total and 1 to one key's hits,
so the total and the sum of the hits are both 600.

Attacks: publication of a buffered ``d[k] = v`` at commit. Writing the key
back runs the key's own ``__hash__`` and ``__eq__`` (Python code) while the
committing section holds its stripes; an engine that let those reads
re-validate against its own locked stripes aborted half-way through
publication, and the retry applied the already published writes again
(the total counted 550 for 50 calls). The calls read shared state a varying
number of times first, so commits overlap in many ways.
"""

import transaction


class Key:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return isinstance(other, Key) and self.n == other.n

    def __hash__(self):
        return hash(self.n)


K = 600
keys = [Key(i) for i in range(8)]
config = {"weight": 1}
total = {"v": 0}
hits = {key: 0 for key in keys}


def job(i):
    acc = 0
    for _ in range(i * 7 % 1100):           # ordinary reads of shared state
        acc += config["weight"]
    total["v"] += 1
    key = keys[i % 8]
    hits[key] = hits[key] + 1


def main():
    bad = []
    for i in range(K):
        transaction.add(job, i)
    try:
        transaction.run()
    except Exception as exc:
        bad.append(("raised", repr(exc)))
    if total["v"] != K or sum(hits.values()) != K:
        bad.append(("counted", total["v"], sum(hits.values())))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
