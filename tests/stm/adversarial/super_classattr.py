"""A class-level counter read through ``super()`` and written on the base class.

Serial invariant: every call does ``Base.total = super().total + 1`` from a
method of Sub (``super().total`` is Base's class attribute) and reads it
back through ``super()``: it sees its own write, and after K calls
``Base.total == K``.

Attacks: ``super().total`` was an attribute of a ``super`` object, read by a
plain getattr: the class value live, without a version (lost updates) and
without the call's own write. Now read along the MRO after the class
``super()`` names, as ``Cls.x`` is.
"""
import transaction

K = 2000
bad = []


class Base:
    total = 0


class Sub(Base):
    def add(self):
        new = super().total + 1
        Base.total = new
        if super().total != new:
            bad.append(("own write not seen", new, super().total))


S = Sub()


def step(i):
    S.add()


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if Base.total != K:
        bad.append(("lost", Base.total, K))
    print("BAD" if bad else "OK", len(bad), bad[-1:], bad[:1])


main()
