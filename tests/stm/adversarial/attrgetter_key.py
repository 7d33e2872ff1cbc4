"""``max(accounts, key=operator.attrgetter("bal"))`` right after the section topped one up.

Serial invariant: the account a section has just raised 1000 above all the
others is the maximum the same section finds. One thread suffices.

Attacks: uninstrumented code reading the attributes of shared instances.
``operator.attrgetter`` is C code that reads ``obj.__dict__`` directly, past
the section's redo log: unless the engine steps in before the call, it
misses the section's own buffered write.
"""

import operator

import transaction


class Account:
    def __init__(self, n):
        self.n = n
        self.bal = 100


accounts = [Account(n) for n in range(5)]
BALANCE = operator.attrgetter("bal")
bad = []


def boost(i):
    account = accounts[i % 5]
    account.bal += 1000
    top = max(accounts, key=BALANCE)
    if top is not account:
        bad.append(("max missed own write", i))
    account.bal -= 1000


def main():
    for i in range(40):
        transaction.add(boost, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
