"""A special method replaced on the class, then used implicitly in the same call.

Serial invariant (plain Python): after ``Money.__str__ = str_v2`` and
``Money.__len__ = len_v2``, ``str(m)``, ``f"{m}"`` and ``len(m)`` use the
new methods at once. One thread suffices.

Attacks: special methods set on a class went to the redo log, while
``str()``, ``len()`` and f-strings use the type slots: the old methods ran.
Now a dunder written to a class is a reshape, in place.
"""
import transaction

bad = []


def str_v1(self):
    return "v1"


def str_v2(self):
    return "v2"


def len_v1(self):
    return 1


def len_v2(self):
    return 2


class Money:
    __str__ = str_v1
    __len__ = len_v1


M = Money()


def step(i):
    Money.__str__ = str_v2
    Money.__len__ = len_v2
    got = (str(M), f"{M}", len(M), M.__str__())
    if got != ("v2", "v2", 2, "v2"):
        bad.append((i, got))
    Money.__str__ = str_v1
    Money.__len__ = len_v1


def main():
    for i in range(10):
        transaction.add(step, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:2])


main()
