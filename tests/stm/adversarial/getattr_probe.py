"""A callable object whose ``__getattr__`` counts the attribute misses.

Serial invariant: the program itself never reads a missing attribute of
``handler``, so ``handler.misses`` stays 0; every call is counted once.

Attacks: the engine's own probing of the callables a section calls
(``getattr(f, "__name__", None)``, ``__self__``, ``__wrapped__``...) runs the
application's ``__getattr__`` as if the program had asked.
"""

import transaction

K = 50


class Handler:
    def __init__(self):
        self.misses = 0
        self.calls = 0

    def __getattr__(self, name):
        self.misses += 1
        raise AttributeError(name)

    def __call__(self, i):
        self.calls += 1


handler = Handler()


def job(i):
    handler(i)


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    ok = handler.misses == 0 and handler.calls == K
    print("OK" if ok else "BAD", "misses", handler.misses, "calls", handler.calls)


main()
