"""A tally kept in another module's global, read through that module's
function and rebound from here: ``store.count = store.current() + 1``.

Serial invariant: every call adds 1: store.count == N at the end.

Attacks: a global of an instrumented module rebound from another module
(limit 4): the module's own function reads it plainly (no function of it
declares it ``global``), so the read left no entry in the read log and two
sections committed the same count. A write to a global its module reads
plainly now makes the section inevitable and aborts every overlapping one.
"""
import sys
import transaction
from appstate import store

N = 2000


def bump(i):
    cur = store.current()
    x = 0
    for k in range(300):
        x += k * i
    store.count = cur + 1


def main():
    for i in range(N):
        transaction.add(bump, i)
    transaction.run()
    if store.count != N:
        print("BAD count", store.count, "!=", N)
        sys.exit(1)
    print("OK", store.count)


main()
