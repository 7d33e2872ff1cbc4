"""``Counter`` arithmetic and ``list.sort(key=...)`` right after the section's own writes.

Serial invariants: ``c + Counter(z=1)``, ``c - Counter(b=1)``, ``c | Counter()``,
``c & c``, ``c.most_common(1)`` and ``c.total()`` all reflect the ``c["a"] += 1``
just made; a list sorted by a key that reads a shared dict is in key order.

Attacks: library code that is plain Python but not instrumented (the
``Counter`` operators live in ``collections``) reading a shared container
the section has written: the engine must hand it the section's view, not
the committed dict. ``list.sort`` with an instrumented key function calls
back into application code from C.
"""

from collections import Counter

import transaction

c = Counter(a=5, b=5)
items = [3, 1, 2]
rank = {1: 3, 2: 2, 3: 1}
bad = []


def step(i):
    c["a"] += 1
    if (c + Counter(z=1))["a"] != c["a"]:
        bad.append(("add", c["a"]))
    if (c - Counter(b=1))["a"] != c["a"]:
        bad.append(("sub", c["a"]))
    if (c | Counter())["a"] != c["a"] or (c & c)["a"] != c["a"]:
        bad.append(("or/and", c["a"]))
    if c.most_common(1)[0] != ("a", c["a"]):
        bad.append(("most_common", c.most_common(1)))
    if c.total() != c["a"] + c["b"]:
        bad.append(("total", c.total()))
    rank[items[0]] += 10
    items.sort(key=lambda x: rank[x])
    if [rank[x] for x in items] != sorted(rank[x] for x in items):
        bad.append(("sort key", list(items)))
    c["a"] -= 1


def main():
    for i in range(100):
        transaction.add(step, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
