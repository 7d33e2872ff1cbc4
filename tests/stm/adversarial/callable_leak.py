"""Callable objects made per call, called once, then dropped: each is finalized.

Serial invariant: every ``Task`` made by a call dies when the call returns
(nothing keeps it), so its ``__del__`` runs: after K calls and a
``gc.collect()``, ``FREED == K``.

Attacks: the call barrier's policy cache (``policy.LOOKUP_CACHE``) is keyed
by the callable itself: an instance of an application class with
``__call__`` that the policy table does not know is kept there for ever,
with everything it references, and its finalizer never runs.
"""

import gc

import transaction

K = 200
FREED = 0


class Task:
    def __init__(self, i):
        self.i = i

    def __call__(self):
        return self.i * 2

    def __del__(self):
        global FREED
        FREED += 1


def job(i):
    t = Task(i)
    t()


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    gc.collect()
    transaction.add(lambda: None)          # a section after the finalizers, to settle
    transaction.run()
    print("OK" if FREED == K else "BAD", "freed", FREED, "of", K)


main()
