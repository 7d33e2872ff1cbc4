"""Fan-out appends with ``map(operator.methodcaller("append", i), LOGS)``.

Serial invariant: every call appends its id to each of the two shared logs
with one ``map`` over ``LOGS``, then bumps ``n``; so both logs always hold
exactly the ids of the calls so far: ``len(LOG_A) == len(LOG_B) == n == K``
and no id twice.

Attacks: a ``methodcaller`` is neither a C function nor a partial, so the
engine does not wrap it to go through the call barrier when handed to
``map``; ``map`` (pure, fresh) over a list display holding the shared
lists records them as read and returns a map the section owns, and
consuming it runs ``LOG.append`` in C on the live lists in an optimistic
section: unlogged, unversioned, and applied again by each retry.
"""
import operator
import transaction

LOG_A = []
LOG_B = []
n = 0
K = 400


def step(i):
    global n
    for _ in map(operator.methodcaller("append", i), [LOG_A, LOG_B]):
        pass
    n += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if not (len(LOG_A) == len(LOG_B) == n == K) or len(set(LOG_A)) != len(LOG_A):
        print("BAD", len(LOG_A), len(LOG_B), len(set(LOG_A)), n, "of", K)
    else:
        print("OK", len(LOG_A), n)


main()
