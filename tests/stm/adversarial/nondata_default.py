"""Attributes with class-level defaults provided by a user non-data descriptor.

``Default(v).__get__`` returns ``v`` when the instance has no value of its
own; once a value is stored (``acct.a = ...``, a plain instance attribute)
it shadows the descriptor, as in plain Python.

Serial invariant: each transfer moves 1 from ``a`` to ``b`` of one account
(``acct.a = acct.a - 1; acct.b = acct.b + 1``), so ``a + b == 0`` for
every account in every state, audits see 0, and the total moved is K.

Attacks: a user non-data descriptor (``__get__`` only, instrumented) was run
as is, so the instance value shadowing it was read live, unversioned: torn
pairs. Now the instance's own value is read through the log first, the
descriptor runs only when there is none.
"""
import transaction

K = 2000
N = 3


class Default:
    def __init__(self, value):
        self.value = value

    def __get__(self, obj, owner=None):
        return self.value


class Acct:
    a = Default(0)
    b = Default(0)


ACCTS = [Acct() for _ in range(N)]
bad = []


def step(i):
    acct = ACCTS[i % N]
    if i % 4 == 3:
        if acct.a + acct.b != 0:
            bad.append(("torn", i, acct.a, acct.b))
        return
    acct.a = acct.a - 1
    acct.b = acct.b + 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    moved = sum(x.b for x in ACCTS)
    exp = sum(1 for i in range(K) if i % 4 != 3)
    if moved != exp or any(x.a + x.b for x in ACCTS):
        bad.append(("lost", moved, exp, [(x.a, x.b) for x in ACCTS]))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
