"""Benchmark of coroutine steps: W taken at a step's start, or at its first shared access.

Run on the free-threaded interpreter, with the C fast path (ratios from one run)::

    .venv-ft/bin/python -m bench.bench_steps            # a few seconds
    .venv-ft/bin/python -m bench.bench_steps --rounds 5

An instrumented ``async def`` awaits, computes on its own objects (trial
division into a list it makes), then adds the result to a shared counter.
Event loops on 1 and 2 threads each run such coroutines; every step is
driven outside any section, as a handler's steps are by ``serve``. The
same code runs with the steps taking W at their start (what every step
did before lazy steps, and what the pure-Python barriers still do) and at
their first barrier that may touch shared state (``section._step``), side
by side, best of ``--rounds``. The counter is checked after every run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
import threading
import time
import types

from tornado_stm.instrument.hook import compile_instrumented, prepare_module
from tornado_stm.stm import txn

SOURCE = textwrap.dedent('''
    import asyncio

    TOTAL = {"primes": 0}


    def primes_below(n):
        found = []
        for candidate in range(2, n):
            for divisor in range(2, candidate):
                if candidate % divisor == 0:
                    break
            else:
                found.append(candidate)
        return len(found)


    async def request(n):
        await asyncio.sleep(0)
        count = primes_below(n)          # on the step's own objects: no W yet
        TOTAL["primes"] += count         # the first shared access: W from here
''')

#: Coroutines per loop, requests each, and the bound of each trial division.
COROUTINES, REQUESTS, BOUND = 8, 12, 700


def load() -> types.ModuleType:
    module = types.ModuleType("bench_steps_app")
    prepare_module(module)
    exec(compile_instrumented(SOURCE, "<bench_steps_app>"), module.__dict__)
    return module


def one_run(app: types.ModuleType, threads: int) -> float:
    """Seconds for every loop to serve its requests; checks the shared total."""
    app.TOTAL["primes"] = 0
    expected_each = sum(1 for c in range(2, BOUND) if all(c % d for d in range(2, c)))

    async def loop_of_one_thread() -> None:
        async def client() -> None:
            for _ in range(REQUESTS):
                await app.request(BOUND)
        await asyncio.gather(*(client() for _ in range(COROUTINES)))

    workers = [threading.Thread(target=asyncio.run, args=(loop_of_one_thread(),))
               for _ in range(threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - start
    expected = threads * COROUTINES * REQUESTS * expected_each
    if app.TOTAL["primes"] != expected:
        raise SystemExit(f"bench_steps: lost updates: {app.TOTAL['primes']} != {expected}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each configuration (3)")
    args = parser.parse_args(argv)
    app = load()                         # (installs the barriers)
    if not txn.BARRIERS_CHECK_STEPS[0]:
        print("bench_steps: the C fast path is not in use: steps take W at their start anyway",
              file=sys.stderr)
        return 2
    best: dict[tuple[str, int], float] = {}
    for round_number in range(args.rounds):
        for lazy in (False, True):
            txn.BARRIERS_CHECK_STEPS[0] = lazy
            for threads in (1, 2):
                seconds = one_run(app, threads)
                key = ("first shared access" if lazy else "step start", threads)
                best[key] = min(best.get(key, seconds), seconds)
                print(f"round {round_number + 1}/{args.rounds}: W at {key[0]}, "
                      f"{threads} thread(s): {seconds:.3f} s", file=sys.stderr)
    txn.BARRIERS_CHECK_STEPS[0] = True
    requests = COROUTINES * REQUESTS
    print("| W taken at | 1 thread req/s | 2 threads req/s | 2 threads / 1 thread |")
    print("|---|---:|---:|---:|")
    for mode in ("step start", "first shared access"):
        one, two = requests / best[(mode, 1)], 2 * requests / best[(mode, 2)]
        print(f"| {mode} | {one:,.0f} | {two:,.0f} | {two / one:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
