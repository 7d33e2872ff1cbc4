"""Async generators advanced by hand (no event loop) are dropped by queued calls; their finally counts.

Serial invariant: CLOSED == OPENED == K and every call counted (N == K):
plain Python closes a dropped async generator where it dies when no loop
hook is set, running its ``finally`` once, as it closes a generator.

Attacks: the engine's async generator wrapper left such a generator to
CPython's own finalization, which ran its ``finally`` wherever the object
died: inside the commit that published ``GENS[i] = None``, its writes going
into a log already published (lost; red-team round 38, finding 3). It is
now closed as a generator is, after the section and in steps.
"""
import gc

import transaction

K = 2000
STATE = {"closed": 0, "n": 0, "opened": 0}
GENS = []


async def stream():
    STATE["opened"] += 1
    try:
        yield 1
        yield 2
    finally:
        STATE["closed"] += 1


def advance(generator):
    try:
        generator.asend(None).send(None)
    except StopIteration as stop:
        return stop.value


def drop(i):
    GENS[i] = None
    STATE["n"] += 1


def main():
    for _ in range(K):
        generator = stream()
        advance(generator)
        GENS.append(generator)
    del generator
    for i in range(K):
        transaction.add(drop, i)
    transaction.run()
    gc.collect()
    if STATE["closed"] == STATE["n"] == STATE["opened"] == K:
        print("OK", STATE)
    else:
        print("BAD", STATE)


main()
