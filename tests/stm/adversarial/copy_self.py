"""``copy.copy`` of an object whose ``__copy__`` returns ``self`` (enum members,
singletons and value objects do this).

Serial invariant: every call does ``copy.copy(Color.RED).hits += 1``, which in
Python is ``Color.RED.hits += 1``: after K calls ``Color.RED.hits == K``.

Attacks: ``copy.copy`` is ``pure fresh`` in the policy table, so whatever it
returns is taken to be an object the section made (private: read and
written in place, with no log). ``Enum.__copy__`` returns the shared member
itself.
"""

import copy
import enum

import transaction

K = 400


class Color(enum.Enum):
    RED = 1


Color.RED.hits = 0


def hit(i):
    c = copy.copy(Color.RED)
    c.hits += 1


def main():
    for i in range(K):
        transaction.add(hit, i)
    transaction.run()
    n = Color.RED.hits
    print("OK" if n == K else "BAD", "hits", n, "of", K)


main()
