"""Handlers on two loops break out of ``async for`` over an async generator whose ``finally`` counts.

Serial invariant: once everything is collected, every stream opened has
been closed (OPEN == 0, CLOSED == OPENED == 2 * N): the ``finally`` of an
abandoned async generator runs once, whole, as a step of the loop that
iterated it.

Attacks: asyncio's finalizer hook closes an abandoned async generator with
``agen.aclose()`` as a task of its own: on the raw generator, its
``finally`` ran as plain code, not as a step holding W, and its
read-modify-writes raced the other loop's steps (red-team round 37,
finding 4). The engine's async generator wrapper now closes it in steps.
"""

import asyncio
import gc

from appstate.loops import failures, run_loops

N = 800
STATE = {"open": 0, "opened": 0, "closed": 0}


async def stream():
    STATE["open"] += 1
    STATE["opened"] += 1
    try:
        for i in range(10):
            yield i
    finally:
        STATE["open"] -= 1
        STATE["closed"] += 1


async def handler():
    for _ in range(N):
        async for value in stream():
            if value == 2:
                break
        await asyncio.sleep(0)
    for _ in range(5):                  # the closing tasks run meanwhile
        await asyncio.sleep(0.01)


errors = failures(run_loops([handler, handler]))
gc.collect()
if not errors and STATE["open"] == 0 and STATE["closed"] == STATE["opened"] == 2 * N:
    print("OK", STATE)
else:
    print("BAD", STATE, errors[:2])
