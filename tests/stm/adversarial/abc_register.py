"""A class attribute of an ``abc.ABC`` subclass whose name is also a method of ``ABCMeta`` (``register``).

Serial invariant: every call does ``Base.register = Sub.register + 1``
(``Sub.register`` is Base's class attribute, found through Sub's MRO), so
after K calls ``Base.register == K``.

Attacks: as ``meta_default``, with ``ABCMeta.register`` (a method):
``Sub.register`` was read as a method of the metaclass, live and
unversioned; lost updates.
"""
import abc
import transaction

K = 1000


class Base(abc.ABC):
    register = 0


class Sub(Base):
    pass


def step(i):
    Base.register = Sub.register + 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    print("OK" if Base.register == K else "BAD", Base.register, "of", K)


main()
