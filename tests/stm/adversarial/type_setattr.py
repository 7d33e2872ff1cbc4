"""A class attribute counted through ``type.__setattr__`` called directly.

Serial invariant: each call adds one to ``Counter.n`` as it reads it, so
after K calls ``Counter.n == K``.

Attacks: ``type.__setattr__(cls, name, value)`` (as a metaclass's
``__setattr__`` calls it, here with no metaclass at all): it had no call
policy, made the section inevitable and wrote the class in place without
a version, so optimistic sections that had read ``Counter.n`` committed on
the stale value (red-team round 11).
"""

import transaction

K = 400


class Counter:
    n = 0


def bump(i):
    type.__setattr__(Counter, "n", Counter.n + 1)


def main():
    for i in range(K):
        transaction.add(bump, i)
    transaction.run()
    print("BAD n =" if Counter.n != K else "OK n =", Counter.n, "of", K)


main()
