"""An override on a subclass removed with ``del Sub.limit`` so the base's value shows again.

Serial invariant (plain Python): right after ``del Sub.limit``, both
``Sub.limit`` and ``obj.limit`` (obj a Sub instance) read ``Base.limit``
(10); the call then sets the override back. One thread suffices.

Attacks: after ``del Sub.limit`` (in the redo log) the class read still
answered the deleted value: a DELETED record was skipped over to the live
class dict.
"""
import transaction

bad = []


class Base:
    limit = 10


class Sub(Base):
    limit = 99


OBJ = Sub()


def step(i):
    del Sub.limit
    a = Sub.limit
    b = OBJ.limit
    c = getattr(Sub, "limit")
    if (a, b, c) != (10, 10, 10):
        bad.append((i, a, b, c))
    Sub.limit = 99


def main():
    for i in range(20):
        transaction.add(step, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:2])


main()
