"""An account whose class validates writes in ``__setattr__`` and stores them
with ``super().__setattr__(name, value)`` (seventh round).

Serial invariant: every deposit changes balance and deposits together, so
readers always see balance == deposits, and both end at the number of
deposits.

Attacks: the object slot bound to its instance. ``super().__setattr__`` is
``object.__setattr__`` for the call policy, whose handler expected
(self, name, value) and called anything else as it was: the write went in
place, unlogged and unversioned, from an optimistic section.
"""
import transaction

K = 1200


class Account:
    def __init__(self):
        self.balance = 0
        self.deposits = 0

    def __setattr__(self, name, value):
        if value < 0:
            raise ValueError(name)
        super().__setattr__(name, value)


acct = Account()
bad = []


def spin():
    x = 0
    for j in range(200):
        x += j
    return x


def deposit(i):
    b = acct.balance
    spin()
    acct.balance = b + 1
    acct.deposits = acct.deposits + 1


def check(i):
    if acct.balance != acct.deposits:
        bad.append((acct.balance, acct.deposits))


def main():
    for i in range(K):
        transaction.add(deposit if i % 4 else check, i)
    transaction.run()
    want = K - K // 4
    if acct.balance != want or acct.deposits != want:
        bad.append(("final", acct.balance, acct.deposits, want))
    print("BAD %r" % bad[:4] if bad else "OK")


main()
