"""Half the calls hand ``EVENTS.append`` (a library callable) to a thread
pool and do not wait; the others append to EVENTS in their sections.

Serial invariant: after run() and the pool's shutdown, EVENTS holds every
value once (plain Python's list.append is atomic, whichever thread makes it).

Attacks: work handed to a pool runs as plain code on the pool's thread,
borrowing the W of the section that handed it over only while that hold
lasts (specials.handing_work_to_a_thread). A fire-and-forget task runs after
the section, and a library callable called straight by the pool changed the
list in place, unversioned: an optimistic section that had copied EVENTS
committed over the append (9-56 of 400 lost on 4 threads, red-team round
42). The task's call now goes through the call barrier as plain code's does
(specials.through_the_call_barrier), a ``functools.partial`` opened.
"""
import functools
from concurrent.futures import ThreadPoolExecutor

import transaction

N = 400
EVENTS = []
POOL = ThreadPoolExecutor(2)


def call(i):
    if i % 4 == 1:
        POOL.submit(EVENTS.append, i)                           # fire and forget
    elif i % 4 == 3:
        POOL.submit(functools.partial(EVENTS.insert, 0), i)
    else:
        EVENTS.append(i)


for i in range(N):
    transaction.add(call, i)
transaction.run()
POOL.shutdown(wait=True)
lost = sorted(set(range(N)) - set(EVENTS))
print("OK" if not lost and len(EVENTS) == N else f"BAD {len(lost)} lost, {len(EVENTS)} events")
