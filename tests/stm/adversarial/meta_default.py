"""A metaclass attribute as a default for classes, overridden by a base class.

Serial invariant (plain Python): ``Sub.abstract`` finds ``Base.abstract``
(True) through Sub's MRO before the metaclass's default (False); and
``Sub.level`` is Base's counter, bumped by every call through
``Base.level = Sub.level + 1``: it ends at K.

Attacks: ``Sub.abstract`` was classified by the metaclass's entry of the
same name and answered by the metaclass, not by ``Base``; ``Sub.level``
likewise (lost updates). Now a class object's attribute is read along its
MRO first, the metaclass's only after it (unless the metaclass has a data
descriptor).
"""
import transaction

K = 1000
bad = []


class Meta(type):
    abstract = False
    level = -100


class Base(metaclass=Meta):
    abstract = True
    level = 0


class Sub(Base):
    pass


def step(i):
    if Sub.abstract is not True:
        bad.append(("abstract", i, Sub.abstract))
    Base.level = Sub.level + 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if Base.level != K:
        bad.append(("level", Base.level))
    print("BAD" if bad else "OK", len(bad), bad[:2], bad[-1:])


main()
