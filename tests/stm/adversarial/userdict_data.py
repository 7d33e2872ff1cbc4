"""Balances in a ``collections.UserDict`` subclass, audited through its public ``.data`` dict.

Serial invariant: transfers move 1 between two accounts with
``BANK[a] -= 1; BANK[b] += 1`` (UserDict's own methods), so the balances
always total TOTAL; audits sum ``BANK.data.values()`` (the real dict
UserDict documents) and always see TOTAL.

Attacks: ``BANK[a] -= 1`` ran ``UserDict.__setitem__`` in place, which
changed ``BANK.data`` without versions; audits of ``BANK.data.values()``
committed torn totals. Now an item write through unknown code holds the
stripes of what it reaches (``.data`` and its keys).
"""
import collections
import transaction

K = 3000
N = 6
TOTAL = 600


class Bank(collections.UserDict):
    pass


BANK = Bank({k: 100 for k in range(N)})
bad = []


def step(i):
    if i % 2:
        s = sum(BANK.data.values())
        if s != TOTAL:
            bad.append((i, s))
        return
    a, b = i % N, (i * 7 + 1) % N
    BANK[a] -= 1
    BANK[b] += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if sum(BANK.data.values()) != TOTAL:
        bad.append(("final", sum(BANK.data.values())))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
