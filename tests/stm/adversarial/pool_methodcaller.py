"""Half the calls hand ``methodcaller("append", i)`` and the shared list to a
thread pool and do not wait (``methodcaller("update", ...)`` and a shared
dict, some); the others append in their sections.

Serial invariant: after run() and the pool's shutdown, EVENTS holds every
value once and TABLE every key handed to the pool.

Attacks: a library callable handed to a pool is called through the call
barrier (specials.through_the_call_barrier), which could not see through an
``operator.methodcaller``: called as unknown code on the pool's thread, it
appended in place, unversioned, and optimistic sections committed over it
(7-38 of 150 lost through ``asyncio.to_thread``, red-team round 43). The
barrier now opens it into the bound method it calls. The calls handing the
dict over turn inevitable after appending to EVENTS: a pool task's append
could borrow their W between their validation and their publication (W was
opened to plain code first), and the published list overwrote it (1-5 lost
in 2 runs of 6); W is opened after the publication now.
"""
import operator
from concurrent.futures import ThreadPoolExecutor

import transaction

N = 400
EVENTS = []
TABLE = {}
POOL = ThreadPoolExecutor(2)


def call(i):
    if i % 4 == 1:
        POOL.submit(operator.methodcaller("append", i), EVENTS)     # fire and forget
    elif i % 4 == 3:
        EVENTS.append(i)
        POOL.submit(operator.methodcaller("update", {i: i}), TABLE)
    else:
        EVENTS.append(i)
        TABLE[-i - 1] = i


for i in range(N):
    transaction.add(call, i)
transaction.run()
POOL.shutdown(wait=True)
lost = sorted(set(range(N)) - set(EVENTS))
keys_lost = [i for i in range(N) if (i if i % 4 == 3 else -i - 1) not in TABLE and i % 4 != 1]
print("OK" if not lost and len(EVENTS) == N and not keys_lost
      else f"BAD {len(lost)} lost, {len(EVENTS)} events, {len(keys_lost)} keys lost")
