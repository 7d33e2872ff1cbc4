"""The ``__eq__`` and ``__repr__`` a ``dataclass`` generates, after the section's own write.

Serial invariant: right after ``p.x += 1``, ``p != q`` (``p`` is one ahead)
and ``repr(p)`` shows the new ``x``. One thread suffices.

Attacks: uninstrumented code reading the attributes of shared instances: the
methods ``dataclasses`` generates are compiled outside the application's
modules and read ``p.x`` with no barrier: unless the engine steps in, they
miss the buffered write.
"""

from dataclasses import dataclass

import transaction


@dataclass
class Point:
    x: int
    y: int


p = Point(0, 0)
q = Point(0, 0)
bad = []


def step(i):
    p.x += 1
    if p == q:
        bad.append(("p == q right after p.x += 1", i))
    shown = repr(p)
    if shown != "Point(x=%d, y=0)" % p.x:
        bad.append(("repr misses own write", shown, p.x))
    q.x += 1


def main():
    for i in range(50):
        transaction.add(step, i)
    transaction.run()
    if p != q:
        bad.append(("final", p, q))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
