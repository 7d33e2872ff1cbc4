"""Accounts in a dict: odd calls let a library helper bump every account
(rtlib.bump_all(ACCTS.values(), "n")), even calls bump them in a loop
(for a in ACCTS.values(): a.n += 1).

Serial invariant: each call adds 1 to every account: at the end every
account has n == K, and the accounts always agree with each other.

Attacks: library code run in place by an inevitable section is handed a
dict view: reach.py does not walk into a view (nor any C iterator), so the
accounts it writes are not held or versioned, and optimistic bumps commit
over them.
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
import rtlib
import transaction


class Account:
    def __init__(self):
        self.n = 0


ACCTS = {k: Account() for k in "abc"}
K = 600
bad = []


def step(i):
    if i % 2:
        rtlib.bump_all(ACCTS.values(), "n")
    else:
        seen = []
        for a in ACCTS.values():
            seen.append(a.n)
            a.n += 1
        if len(set(seen)) != 1:
            bad.append((i, seen))


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    ns = [a.n for a in ACCTS.values()]
    if ns != [K] * 3 or bad:
        print("BAD", ns, len(bad), bad[:3]); sys.exit(1)
    print("OK", ns)


main()
