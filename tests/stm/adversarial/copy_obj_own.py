"""A section writes an attribute, then ``copy.copy()``s the object.

Serial invariant: the copy has the value just written. One thread suffices.

Attacks: uninstrumented code reading the attributes of shared instances.
``copy.copy`` (listed ``pure`` in the policy table) copies ``obj.__dict__``
as committed: unless the engine steps in before the call, the copy misses
the section's own buffered write.
"""

import copy

import transaction


class Account:
    def __init__(self):
        self.bal = 0


account = Account()
seen = []


def deposit(i):
    account.bal += 10
    seen.append(copy.copy(account).bal == account.bal)


def main():
    for i in range(20):
        transaction.add(deposit, i)
    transaction.run()
    print("OK" if all(seen) else "BAD", seen.count(False), "of", len(seen),
          "copies missed the section's own write")


main()
