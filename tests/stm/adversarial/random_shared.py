"""A shared, seeded ``random.Random`` drawn from by sections that all conflict.

Serial invariant: the ``K`` draws are exactly the first ``K`` numbers of
``Random(42)``'s stream, in some order.

Attacks: library objects changed by their own methods. A draw changes the
generator's state in C, which no redo log holds: an aborted attempt that
drew would consume a number for nothing. ``random`` methods are
``mutates 0`` of their generator, so a draw from a shared one makes the
section inevitable.
"""

import random

import transaction

K = 300
rng = random.Random(42)
drawn = []
stats = {"n": 0}


def draw(i):
    value = rng.getrandbits(32)
    stats["n"] += 1             # every call conflicts with every other one
    drawn.append(value)


def main():
    reference = random.Random(42)
    expected = sorted(reference.getrandbits(32) for _ in range(K))
    for i in range(K):
        transaction.add(draw, i)
    transaction.run()
    bad = []
    if sorted(drawn) != expected:
        bad.append(("draws differ from the first K of the stream",
                    len(set(drawn) - set(expected))))
    print("BAD" if bad else "OK", bad)


main()
