"""The singleton metaclass pattern: ``Registry()`` returns one shared instance.

Serial invariant: every call does ``Registry().hits += 1`` on the one
instance: after K calls ``Registry().hits == K``.

Attacks: calling an application class is ``pure fresh`` when its
``__new__`` is ``object.__new__``, and its result is then taken to be an
object the section made (private: read and written in place, no log).
A metaclass ``__call__`` that hands back a cached instance breaks that
assumption: the shared singleton is treated as the section's own.
"""

import transaction

K = 400


class SingletonMeta(type):
    _instances = {}

    def __call__(cls, *args, **kwargs):
        if cls not in cls._instances:
            cls._instances[cls] = super().__call__(*args, **kwargs)
        return cls._instances[cls]


class Registry(metaclass=SingletonMeta):
    def __init__(self):
        self.hits = 0


Registry()                      # made at import, before the calls


def hit(i):
    reg = Registry()
    reg.hits += 1


def main():
    for i in range(K):
        transaction.add(hit, i)
    transaction.run()
    n = Registry().hits
    print("OK" if n == K else "BAD", "hits", n, "of", K)


main()
