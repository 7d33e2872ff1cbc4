"""Accounts that are also dict keys (own ``__eq__``/``__hash__``) and have a property reading a total.

Serial invariant: writers add 1 to an account, to a shared total and to the
account's entry in a registry keyed by equal, new account objects; readers
check that the accounts sum to the total, that the registry sums to the
total, and that a missing account is not found. 2000 writes in all.

Attacks: dict lookups through a key's Python ``__eq__`` (an equal but
distinct object), a ``+=`` on such an entry, and a property read in a
generator expression, all under conflicts between readers and writers.
"""

import transaction

total = {"v": 0}


class Account:
    def __init__(self, n):
        self.n = n
        self.a = 0

    @property
    def share(self):
        return self.a - total["v"] // 8

    def __eq__(self, other):
        return isinstance(other, Account) and self.n == other.n

    def __hash__(self):
        return hash(self.n)


accounts = [Account(i) for i in range(8)]
registry = {account: 0 for account in accounts}
bad = []


def write(i):
    account = accounts[i % 8]
    account.a += 1
    total["v"] += 1
    registry[Account(i % 8)] += 1
    if registry[account] != account.a:
        bad.append("own write not seen")


def read(i):
    sum(account.share for account in accounts)
    if sum(account.a for account in accounts) != total["v"]:
        bad.append("accounts torn")
    if sum(registry.values()) != total["v"]:
        bad.append(("registry torn", sum(registry.values()), total["v"]))
    try:
        registry[Account(99)]
        bad.append("missing account found")
    except KeyError:
        pass


def main():
    for i in range(3000):
        transaction.add(write if i % 3 else read, i)
    try:
        transaction.run()
    except Exception as exc:
        bad.append(("raised", repr(exc)))
    if total["v"] != 2000 or len(registry) != 8:
        bad.append(("final", total["v"], len(registry)))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
