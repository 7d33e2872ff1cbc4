"""A ``contextvars.ContextVar`` handed from one call to the next.

Serial invariant: each call reads the value the previous call (in the
serial order) set and sets its own: over K calls, the values read are the
default once and K-1 distinct call numbers, each at most once; after
``run()`` the script's own context holds the value of the last call, the
one no call read.

Attacks: context variables live in the thread's context: a call on one
worker never saw what a call committed on another worker set, so two
calls read the same value (or the default twice), and the script's
context kept the default after the run.
"""

import contextvars

import transaction

K = 200
LAST = contextvars.ContextVar("LAST", default=-1)
seen = []


def step(i):
    seen.append(LAST.get())
    LAST.set(i)


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    bad = []
    if len(set(seen)) != K:
        bad.append(("reads", len(seen), "distinct", len(set(seen)), "defaults", seen.count(-1)))
    never_read = set(range(K)) - set(seen)
    if never_read != {LAST.get()}:
        bad.append(("after the run", LAST.get(), "never read", sorted(never_read)[:5]))
    print("BAD" if bad else "OK", bad)


main()
