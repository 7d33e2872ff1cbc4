"""A frozenset of (mutable) user objects: each call bumps alice.n, then
formats the set of admins with repr().

Serial invariant: right after alice.n = v, repr(ADMINS) shows n=v (one
thread suffices).

Attacks: uninstrumented readers (a dataclass's generated __repr__) reached
through a frozenset: the engine treats frozenset as an immutable atom and
does not record or view what it holds, so the section's own buffered write
is missed (also on --backend serial).
"""
import sys
from dataclasses import dataclass
import transaction


@dataclass(eq=False)
class User:
    name: str
    n: int = 0


alice = User("alice")
ADMINS = frozenset([alice])
bad = []


def step(i):
    alice.n += 1
    shown = repr(ADMINS)
    want = "frozenset({User(name='alice', n=%d)})" % alice.n
    if shown != want:
        bad.append((i, shown, want))


def main():
    for i in range(20):
        transaction.add(step, i)
    transaction.run()
    if bad:
        print("BAD", len(bad), bad[:2]); sys.exit(1)
    print("OK", alice.n)


main()
