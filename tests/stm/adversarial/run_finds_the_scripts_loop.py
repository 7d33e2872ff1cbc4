"""Calls ask for the event loop the script made (``IOLoop.current()``,
``asyncio.get_event_loop()``) and put callbacks on it; the script runs the
loop after run().

Serial invariant: the calls run where the script runs, so each finds the
script's loop, and every callback runs once after run(), a call's two in
the order it queued them.

Attacks: transaction.run's workers are threads of their own, which had no
event loop: asyncio.get_event_loop() raised RuntimeError there and
Tornado's IOLoop.current() made a new loop per worker, which never ran (all
callbacks lost, red-team round 42). The workers now see the caller's loop
for the run (run_context.RunContext.event_loop). The add_callback of an
optimistic section is made at its commit (loop.scheduling).
"""
import asyncio

from tornado.ioloop import IOLoop

import transaction

N = 200
LOOP = asyncio.new_event_loop()
asyncio.set_event_loop(LOOP)
EVENTS = []
FOUND = {"same": 0, "other": 0}


def mark(tag, i):
    EVENTS.append((tag, i))


def call(i):
    if asyncio.get_event_loop() is LOOP:
        FOUND["same"] += 1
    else:
        FOUND["other"] += 1
    IOLoop.current().add_callback(mark, "a", i)
    IOLoop.current().add_callback(mark, "b", i)


for i in range(N):
    transaction.add(call, i)
transaction.run()


async def drain():
    for _ in range(5):
        await asyncio.sleep(0)

LOOP.run_until_complete(drain())
position = {event: k for k, event in enumerate(EVENTS)}
missing = [i for i in range(N) if ("a", i) not in position or ("b", i) not in position]
swapped = [i for i in range(N) if not missing and position[("a", i)] > position[("b", i)]]
if len(EVENTS) != 2 * N or missing or swapped or FOUND != {"same": N, "other": 0}:
    print("BAD", len(EVENTS), "events", len(missing), "missing", len(swapped), "swapped", FOUND)
else:
    print("OK", len(EVENTS))
