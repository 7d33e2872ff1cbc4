"""A coroutine publishes a closure over two of its locals, then sets both in each step; another loop calls it.

Serial invariant: the closure always returns two equal numbers (the
coroutine sets ``done`` and ``total`` within one step, and steps never
overlap in a serial run).

Attacks: a local that nested functions only read is a plain cell, stored
and loaded without a barrier, and a coroutine step ran without W until its
first barrier: its stores came before it took W, while the other loop's
step, holding W, called the closure (red-team round 37, finding 5). The
steps of such a function now take W at their start.
"""

import asyncio

from appstate.loops import failures, run_loops

N = 20000
PROGRESS = {}
TORN = []
DONE = []


async def job():
    done = 0
    total = 0

    def progress():
        return done, total

    PROGRESS["job"] = progress
    for i in range(N):
        done = i
        x = 0
        for j in range(30):             # a moment between the two stores
            x += j
        total = i
        await asyncio.sleep(0)


async def watcher():
    while "job" not in PROGRESS:
        await asyncio.sleep(0)
    for _ in range(N):
        seen_done, seen_total = PROGRESS["job"]()
        if seen_done != seen_total:
            TORN.append((seen_done, seen_total))
        await asyncio.sleep(0)


errors = failures(run_loops([job, watcher]))
if not TORN and not errors:
    print("OK", N, "calls, none torn")
else:
    print("BAD", len(TORN), "torn", TORN[:3], errors[:2])
