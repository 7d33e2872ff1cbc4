"""Bulk attribute updates with ``map(setattr, ...)``.

Serial invariant: every call adds 1 to ``acct.n`` of both accounts through
``setattr`` driven by ``map``; after K calls ``a.n == b.n == K``.

Attacks: an uninstrumented mutating builtin (``setattr``) handed to ``map``
as a plain function, not a bound method of a shared container: the map
object is the section's own, and consuming it runs ``setattr`` in C on the
shared instances, past the barriers and the redo log.
"""

import transaction

K = 300


class Acct:
    def __init__(self):
        self.n = 0


a = Acct()
b = Acct()
PAIR = [a, b]


def bump(i):
    news = [a.n + 1, b.n + 1]
    for _ in map(setattr, PAIR, ("n", "n"), news):
        pass


def main():
    for i in range(K):
        transaction.add(bump, i)
    transaction.run()
    print("BAD" if (a.n, b.n) != (K, K) else "OK", a.n, b.n, "of", K)


main()
