"""A bounded shared ``deque`` rotated, shifted and refilled from both ends.

Serial invariant: the deque always holds a permutation of ``0..N-1``.

Attacks: ``deque`` mutators in the redo log (``rotate``, ``pop``,
``appendleft``, ``extendleft`` with ``maxlen``, where an append past the
bound drops from the other end) and readers (``sorted``, ``len``) seeing
the section's own changes and one consistent snapshot.
"""

from collections import deque

import transaction

N = 8
ring = deque(range(N), maxlen=N)
bad = []


def rotate(i):
    ring.rotate(i % 3 + 1)


def shift(i):
    ring.appendleft(ring.pop())


def swap_front(i):
    a = ring.popleft()
    b = ring.popleft()
    ring.extendleft([b, a])


def audit(i):
    if sorted(ring) != list(range(N)) or len(ring) != N:
        bad.append(("audit", list(ring)))


CALLS = [rotate, shift, swap_front, audit]


def main():
    for i in range(400):
        transaction.add(CALLS[i % len(CALLS)], i)
    transaction.run()
    if sorted(ring) != list(range(N)):
        bad.append(("final", list(ring)))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
