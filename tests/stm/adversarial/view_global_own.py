"""A ``dict.values()`` view bound once at import, summed right after the section's own write.

Serial invariant: after ``balances["a0"] += 5``, ``sum(VALUES)`` is 5 more
than the constant total. One thread suffices.

Attacks: dict views made outside the section. The view was made by plain
code at import and reads the live dict: unless the engine reads it through
the section's view of the dict, it misses the section's buffered write.
"""

import transaction

balances = {f"a{k}": 100 for k in range(10)}
VALUES = balances.values()      # a live view, bound once at import
bad = []


def own(i):
    balances["a0"] += 5
    total = sum(VALUES)
    balances["a0"] -= 5
    if total != 1005:
        bad.append(("own write not seen through view", total))


def main():
    for i in range(100):
        transaction.add(own, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
