"""asyncio.run inside a queued call, with asyncio.to_thread.

Serial invariant: each call runs a small event loop that computes two
values on threads (asyncio.to_thread) and records them; the run ends and
the tally is exact.
Attacks: library code (asyncio) handing application functions to its own
default ThreadPoolExecutor (loop.run_in_executor), not through the call
barrier, so the engine's W lending to pool tasks never applies.
Red-team round 16: hung 1/1 on 2 threads; asyncio.to_thread and
loop.run_in_executor now hand their work over as a thread pool's submit does.
"""
import asyncio
import sys
import transaction

N = 30
tally = {"n": 0}
seen = []


def work(x):
    seen.append(x)
    return x + 1


async def both(i):
    a, b = await asyncio.gather(asyncio.to_thread(work, i), asyncio.to_thread(work, -i))
    return a + b


def step(i):
    r = asyncio.run(both(i))
    tally["n"] += r


def main():
    for i in range(N):
        transaction.add(step, i)
    transaction.run()
    if tally["n"] != 2 * N or len(seen) != 2 * N:
        print("BAD", tally, len(seen)); sys.exit(1)
    print("OK", tally)


main()
