"""Accounts held in a frozenset: odd calls let a library helper bump every
account (rtlib.bump_all(GROUP, "n")), even calls bump them in a loop.

Serial invariant: every call adds 1 to every account: at the end every
account has n == K, and they always agree.

Attacks: library code run in place by an inevitable section is handed a
frozenset of application objects: reach.py treats frozenset as an atom,
so the accounts it writes are neither held nor versioned.
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
import rtlib
import transaction


class Account:
    def __init__(self):
        self.n = 0


GROUP = frozenset(Account() for _ in range(3))
K = 600
bad = []


def step(i):
    if i % 2:
        rtlib.bump_all(GROUP, "n")
    else:
        seen = []
        for a in GROUP:
            seen.append(a.n)
            a.n += 1
        if len(set(seen)) != 1:
            bad.append((i, seen))


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    ns = [a.n for a in GROUP]
    if ns != [K] * 3 or bad:
        print("BAD", ns, len(bad), bad[:3]); sys.exit(1)
    print("OK", ns)


main()
