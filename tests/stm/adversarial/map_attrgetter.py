"""A section sums ``map(attrgetter("n"), OBJS)`` after
its own write to one of them.

Serial invariant: each call adds 1 to ``OBJS[0].n`` and then reads it back
through ``attrgetter`` in ``map``: it sees ``i + 1`` for the i-th call, so
``seen == list(range(1, K + 1))`` (calls run in some order, each seeing its
own increment: ``sorted(seen)`` is exactly that).

Attacks: ``attrgetter`` handed to ``map`` reads the instance's ``__dict__``
in C: the section's own buffered ``n`` is missed.
"""
import operator
import transaction


class Obj:
    def __init__(self):
        self.n = 0


OBJS = [Obj()]
seen = []
K = 200


def step(i):
    OBJS[0].n += 1
    seen.append(sum(map(operator.attrgetter("n"), OBJS)))


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if sorted(seen) != list(range(1, K + 1)):
        print("BAD own write missed", sorted(seen)[:5], "n", OBJS[0].n)
    else:
        print("OK", OBJS[0].n)


main()
