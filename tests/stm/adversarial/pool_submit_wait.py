"""A call hands work to a shared thread pool and waits for it (``POOL.submit(f).result()``).

Serial invariant: each call counts itself, submits ``tally(i)`` to a
ThreadPoolExecutor made at import and waits for its result; ``tally``
adds to a shared counter. Every call returns, and both counts end at K.
(Plain Python never hangs here: the helper runs while the caller waits.)
Attacks: a pool that outlives the sections (round 13's thread_join): its
threads were started outside any section, and each task waited for the
W the submitting section held while it waited for the task (TimeoutError).
"""
import concurrent.futures

import transaction

K = 40
POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2)
STATE = {"n": 0, "calls": 0}


def tally(i):
    STATE["n"] += 1
    return i


def step(i):
    STATE["calls"] += 1
    r = POOL.submit(tally, i).result(timeout=20)
    if r != i:
        raise AssertionError(r)


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    POOL.shutdown()
    print("OK" if STATE == {"n": K, "calls": K} else "BAD", STATE)


main()
