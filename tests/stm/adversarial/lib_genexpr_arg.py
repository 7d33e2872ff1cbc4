"""Orders: odd calls hand a generator expression of the open orders to a
library helper (rtlib.bump_all(o for o in ORDERS if o.open, "n")), even
calls bump them in a loop.

Serial invariant: each call adds 1 to every open order: at the end every
order has n == K and they always agree.

Attacks: a generator (made by the application, reading through barriers)
handed to library code that writes what it yields: reach.py skips frames,
so those objects' stripes are not held or versioned by the in-place call.
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
import rtlib
import transaction


class Order:
    def __init__(self):
        self.n = 0
        self.open = True


ORDERS = [Order() for _ in range(3)]
K = 600
bad = []


def step(i):
    if i % 2:
        rtlib.bump_all((o for o in ORDERS if o.open), "n")
    else:
        seen = []
        for o in ORDERS:
            seen.append(o.n)
            o.n += 1
        if len(set(seen)) != 1:
            bad.append((i, seen))


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    ns = [o.n for o in ORDERS]
    if ns != [K] * 3 or bad:
        print("BAD", ns, len(bad), bad[:3]); sys.exit(1)
    print("OK", ns)


main()
