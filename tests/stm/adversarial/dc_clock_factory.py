"""A journal of events: some calls stamp with time.monotonic() directly,
others build a dataclass whose `created` field has
default_factory=time.monotonic. Each call appends its stamp to JOURNAL.

Serial invariant: calls run one at a time, so the stamps in JOURNAL never
go back (monotonic clock).

Attacks: a clock read by library code (the dataclass's generated __init__)
in a section that went inevitable is not entered into the committed clock
readings, so an optimistic section with an older reading may commit after it.
"""
import sys
import time
from dataclasses import dataclass, field
import transaction


@dataclass
class Event:
    name: str
    created: float = field(default_factory=time.monotonic)


JOURNAL = []


def direct(i):
    t = time.monotonic()
    s = 0
    for k in range(3000):
        s += k
    JOURNAL.append(t)


def built(i):
    ev = Event("e%d" % i)
    JOURNAL.append(ev.created)


def step(i):
    (built if i % 3 == 0 else direct)(i)


def main():
    n = 3000
    for i in range(n):
        transaction.add(step, i)
    transaction.run()
    back = [(k, JOURNAL[k - 1], JOURNAL[k]) for k in range(1, len(JOURNAL))
            if JOURNAL[k] < JOURNAL[k - 1]]
    if len(JOURNAL) != n or back:
        print("BAD", len(JOURNAL), len(back), back[:3])
        sys.exit(1)
    print("OK", len(JOURNAL))


main()
