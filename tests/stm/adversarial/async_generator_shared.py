"""Two event loops, on two threads, take items from one module-level async generator.

Serial invariant: every item 1..2N is taken exactly once and no
``RuntimeError: anext(): asynchronous generator is already running`` is
raised (steps of coroutines never overlap in a serial run; the generator
computes, then yields, within one step).

Attacks: coroutine steps running without W until their first shared access
(section._step): ``async for v in TICKETS`` resumes a generator frame that
another loop's step may be resuming at the same time; resuming it must take
W unless the step made the generator itself (red-team round 37, finding 3).
"""

import asyncio

from appstate.loops import failures, run_loops

N = 300
TAKEN = []


async def tickets():
    n = 0
    while True:
        total = 0
        for i in range(2000):          # computes before it yields: no shared access
            total += i
        n += 1
        yield n


TICKETS = tickets()


DONE = []


async def take(index):
    got = 0
    async for ticket in TICKETS:
        TAKEN.append(ticket)
        got += 1
        if got == N:
            break
        await asyncio.sleep(0)
    DONE.append(index)
    while len(DONE) < 2:
        # (asyncio.run's end closes the generators its loop iterated, TICKETS
        # too: the other loop would find it closed)
        await asyncio.sleep(0.005)
    return got


results = run_loops([lambda: take(0), lambda: take(1)])
errors = failures(results)
if not errors and sorted(TAKEN) == list(range(1, 2 * N + 1)):
    print("OK", len(TAKEN), "tickets, each once")
else:
    print("BAD", len(TAKEN), "taken,", len(set(TAKEN)), "distinct", errors[:2])
