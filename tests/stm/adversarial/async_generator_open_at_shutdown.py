"""One loop leaves async generators open when it ends; another loop's steps change the same counter.

Serial invariant: at the end every stream opened has been closed, once
(OPEN == 0, CLOSED == OPENED == K): ``asyncio.run``'s end closes the
generators still open, each ``finally`` whole, and no step of the other loop
comes in the middle of one.

Attacks: ``loop.shutdown_asyncgens()`` calls ``aclose()`` on the raw
generators it keeps: their ``finally`` ran as plain code, without W, while
the other loop's steps made read-modify-writes of the same counter (lost
updates; red-team round 37, finding 7). It closes the application's in
steps now (``section.watch_async_generator_shutdown``).
"""

import asyncio

from appstate.loops import failures, run_loops

K = 1500
STATE = {"open": 0, "opened": 0, "closed": 0}
KEEP = []


async def stream():
    STATE["open"] += 1
    STATE["opened"] += 1
    try:
        while True:
            yield 1
    finally:
        STATE["open"] -= 1
        STATE["closed"] += 1


async def leave_open():
    for _ in range(K):
        generator = stream()
        await generator.__anext__()
        KEEP.append(generator)          # kept: closed by the loop's shutdown


async def busy():
    for _ in range(6 * K):
        STATE["open"] += 1
        STATE["open"] -= 1
        await asyncio.sleep(0)


errors = failures(run_loops([leave_open, busy]))
if not errors and STATE["open"] == 0 and STATE["closed"] == STATE["opened"] == K:
    print("OK", STATE)
else:
    print("BAD", STATE, errors[:2])
