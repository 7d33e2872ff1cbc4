"""Class attributes written through a metaclass ``__setattr__`` that delegates to ``type``.

Serial invariant: ``Bank.a + Bank.b == 1000`` between calls; every audit
sees 1000; at the end the sum is 1000 and ``Bank.moves`` counts the moves.

Attacks: ``super().__setattr__`` in a metaclass is ``type.__setattr__``
bound to the class, which the policy table does not know: the write runs
in place, inevitably, and the optimistic readers of ``Bank.a``/``Bank.b``
must still see all of a move or none of it.
"""

import transaction

K = 600


class Audited(type):
    def __setattr__(cls, name, value):
        super().__setattr__(name, value)


class Bank(metaclass=Audited):
    a = 500
    b = 500
    moves = 0


bad = []


def move(i):
    amount = i % 7 + 1
    Bank.a = Bank.a - amount
    for _ in range(50):
        pass
    Bank.b = Bank.b + amount
    Bank.moves = Bank.moves + 1


def audit(i):
    a = Bank.a
    for _ in range(50):
        pass
    b = Bank.b
    if a + b != 1000:
        bad.append(("torn", a, b))


def main():
    for i in range(K):
        transaction.add(move if i % 2 else audit, i)
    transaction.run()
    if Bank.a + Bank.b != 1000 or Bank.moves != K // 2:
        bad.append(("final", Bank.a, Bank.b, Bank.moves))
    print("BAD" if bad else "OK", len(bad), bad[:2], bad[-1:])


main()
