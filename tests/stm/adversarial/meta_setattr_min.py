"""A class attribute counted through a metaclass ``__setattr__`` that calls ``super()``.

Serial invariant: after K calls of ``Counter.n = Counter.n + 1``, ``Counter.n == K``.

Attacks: ``super().__setattr__`` in a metaclass is ``type.__setattr__`` bound to
the class; the policy table does not know it, so the write runs in place
(inevitably), and nothing bumps the version of the class attribute that
optimistic sections read.
"""

import transaction

K = 400


class Meta(type):
    def __setattr__(cls, name, value):
        super().__setattr__(name, value)


class Counter(metaclass=Meta):
    n = 0


def bump(i):
    Counter.n = Counter.n + 1


def main():
    for i in range(K):
        transaction.add(bump, i)
    transaction.run()
    print("BAD n =" if Counter.n != K else "OK n =", Counter.n, "of", K)


main()
