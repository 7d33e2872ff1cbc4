"""Benchmark of the STM engine: barrier costs, and sections on 1 and 2 threads.

Run on the free-threaded interpreter (numbers are ratios from one run)::

    .venv-ft/bin/python bench/bench_stm.py            # full run, a few minutes
    .venv-ft/bin/python bench/bench_stm.py --quick    # smaller, for a smoke test

The workloads are compiled twice from the same source below: plain, and
instrumented by ``tornado_stm.instrument`` (each call from here is then
one atomic section). Reported:

1. barrier cost per instrumented read and write, inside a section and
   outside any section, against the plain operation (ns per operation,
   loop overhead subtracted);
2. primes up to 10000 by trial division (few shared accesses), the
   function of ``apps/primes.py``: plain and instrumented, 1 and 2 threads;
3. A-star search over a shared 100x100 grid (a list of lists read by
   every section): plain and instrumented, 1 and 2 threads;
4. the A-star game's own search (``apps.astar_game.shortest_path``, what
   ``make bench``'s A-star rows run per path request) across its default
   96x64 map, corner to corner: plain and instrumented, 1 and 2 threads.

Speed-ups are throughput with 2 threads over throughput with 1 thread of
the same code; overheads are instrumented time over plain time, 1 thread.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import sys
import threading
import time
from types import ModuleType
from typing import Callable

import apps.astar_game
import apps.primes
from tornado_stm import instrument, stm
from tornado_stm.stm import fastpath

logger = logging.getLogger("bench_stm")

WORKLOAD_SOURCE = '''
import heapq


class Box:
    def __init__(self):
        self.value = 0


SHARED_BOX = Box()
SHARED_LIST = [0]
SHARED_DICT = {"k": 0}


def empty_loop(obj, n):
    for _ in range(n):
        pass


def read_attr(obj, n):
    for _ in range(n):
        obj.value


def write_attr(obj, n):
    for i in range(n):
        obj.value = i


def read_item(lst, n):
    for _ in range(n):
        lst[0]


def write_item(d, n):
    for i in range(n):
        d["k"] = i


def make_grid(size):
    grid = []
    for y in range(size):
        row = []
        for x in range(size):
            row.append(1 if (x % 7 == 3 and y % 11 != 5) else 0)
        grid.append(row)
    return grid


GRID = make_grid(100)


def astar(start, goal):
    """Length of the shortest 4-neighbour path on GRID (1 = wall), or -1."""
    size = len(GRID)
    open_heap = [(0, 0, start)]
    best = {start: 0}
    while open_heap:
        _, cost, cell = heapq.heappop(open_heap)
        if cell == goal:
            return cost
        if cost > best[cell]:
            continue
        x, y = cell
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < size and 0 <= ny < size and GRID[ny][nx] == 0:
                step = cost + 1
                if step < best.get((nx, ny), 1 << 30):
                    best[(nx, ny)] = step
                    guess = step + abs(goal[0] - nx) + abs(goal[1] - ny)
                    heapq.heappush(open_heap, (guess, step, (nx, ny)))
    return -1
'''


def compile_twice(source: str, filename: str, name: str) -> tuple[ModuleType, ModuleType]:
    """A module's source compiled plain, and compiled instrumented.

    Both are registered in ``sys.modules`` (as ``bench_plain_<name>`` and
    ``bench_stm_<name>``), as dataclasses need their module there.
    """
    plain = ModuleType(f"bench_plain_{name}")
    sys.modules[plain.__name__] = plain
    exec(compile(source, filename, "exec"), plain.__dict__)
    instrumented = ModuleType(f"bench_stm_{name}")
    sys.modules[instrumented.__name__] = instrumented
    instrument.prepare_namespace(instrumented.__dict__)
    exec(instrument.compile_instrumented(source, filename), instrumented.__dict__)
    return plain, instrumented


def load_workloads() -> tuple[ModuleType, ModuleType]:
    """The workloads plain and instrumented; primes come from the primes app itself,
    ``shortest_path`` from the A-star game's."""
    plain, instrumented = compile_twice(WORKLOAD_SOURCE, "<bench workload>", "workload")
    for app, function in ((apps.primes, "primes_up_to"), (apps.astar_game, "shortest_path")):
        app_plain, app_stm = compile_twice(inspect.getsource(app), app.__file__,
                                           app.__name__.rsplit(".", 1)[-1])
        setattr(plain, function, getattr(app_plain, function))
        setattr(instrumented, function, getattr(app_stm, function))
    return plain, instrumented


def game_map() -> tuple[list[list[int]], tuple[int, int], tuple[int, int]]:
    """The A-star game's default map (``Game()``), its two far corners made free."""
    grid = apps.astar_game.random_grid(96, 64, 0.2, 2014)
    start, goal = (0, 0), (95, 63)
    for x, y in (start, goal):
        grid[y][x] = apps.astar_game.FREE
    return grid, start, goal


def best_of(repeats: int, run: Callable[[], None]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def ns_per_op(fn: Callable, arg: object, n: int, empty: Callable, repeats: int) -> float:
    loop = best_of(repeats, lambda: empty(arg, n))
    total = best_of(repeats, lambda: fn(arg, n))
    return max(0.0, (total - loop) / n * 1e9)


def barrier_costs(plain: ModuleType, stm_mod: ModuleType, n: int, repeats: int) -> list[dict]:
    rows = []
    cases = [("attribute read", "read_attr", "SHARED_BOX"),
             ("attribute write", "write_attr", "SHARED_BOX"),
             ("list item read", "read_item", "SHARED_LIST"),
             ("dict item write", "write_item", "SHARED_DICT")]
    for label, name, target in cases:
        plain_ns = ns_per_op(getattr(plain, name), getattr(plain, target), n,
                             plain.empty_loop, repeats)
        inside = ns_per_op(getattr(stm_mod, name), getattr(stm_mod, target), n,
                           stm_mod.empty_loop, repeats)
        # __wrapped__ is the function without its section entry: outside any section.
        outside = ns_per_op(getattr(stm_mod, name).__wrapped__, getattr(stm_mod, target),
                            n // 10, stm_mod.empty_loop.__wrapped__, repeats)
        rows.append({"operation": label, "plain_ns": plain_ns, "in_section_ns": inside,
                     "outside_section_ns": outside})
        logger.info("%s: plain %.0f ns, in a section %.0f ns, outside %.0f ns",
                    label, plain_ns, inside, outside)
    return rows


def throughput(task: Callable[[], object], threads: int, per_thread: int,
               repeats: int) -> tuple[float, float]:
    """(tasks per second, CPU seconds per task) with ``threads`` threads of ``per_thread`` tasks.

    CPU time per task is measured per thread (``time.thread_time``): when
    it does not grow from 1 to 2 threads, the threads do not slow each other
    down, whatever else the machine is running.
    """
    cpu: list[float] = []

    def work() -> None:
        start = time.thread_time()
        for _ in range(per_thread):
            task()
        cpu.append((time.thread_time() - start) / per_thread)

    def run() -> None:
        workers = [threading.Thread(target=work) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    rate = threads * per_thread / best_of(repeats, run)
    return rate, min(cpu)


def scaling(name: str, plain_task: Callable, stm_task: Callable, per_thread: int,
            repeats: int) -> dict:
    row: dict = {"workload": name}
    for label, task in (("plain", plain_task), ("stm", stm_task)):
        for threads in (1, 2):
            stm.reset_stats()
            rate, cpu = throughput(task, threads, per_thread, repeats)
            row[f"{label}_{threads}t_per_s"] = rate
            row[f"{label}_{threads}t_cpu_ms"] = cpu * 1000
            if label == "stm":
                snap = stm.stats()
                row[f"stm_{threads}t_aborts"] = snap["aborts"]
                row[f"stm_{threads}t_inevitable"] = snap["inevitable"]
            logger.info("%s %s %d thread(s): %.2f/s, %.1f ms CPU per task", name, label,
                        threads, rate, cpu * 1000)
    row["stm_speedup_2t"] = row["stm_2t_per_s"] / row["stm_1t_per_s"]
    row["plain_speedup_2t"] = row["plain_2t_per_s"] / row["plain_1t_per_s"]
    row["stm_overhead_1t"] = row["plain_1t_per_s"] / row["stm_1t_per_s"]
    row["stm_overhead_cpu"] = row["stm_1t_cpu_ms"] / row["plain_1t_cpu_ms"]
    row["stm_cpu_growth_2t"] = row["stm_2t_cpu_ms"] / row["stm_1t_cpu_ms"]
    return row


def markdown(barriers: list[dict], workloads: list[dict], backend: str) -> str:
    lines = [f"Barriers: {backend}.", "",
             "| operation | plain (ns) | in a section (ns) | outside sections (ns) |",
             "|---|---:|---:|---:|"]
    for row in barriers:
        lines.append(f"| {row['operation']} | {row['plain_ns']:.0f} | {row['in_section_ns']:.0f}"
                     f" | {row['outside_section_ns']:.0f} |")
    lines += ["", "| workload | plain 1 thr (/s) | plain 2 thr (/s) | STM 1 thr (/s) "
              "| STM 2 thr (/s) | STM speed-up 2 thr | STM overhead 1 thr (wall / CPU) "
              "| STM CPU per task 1 thr / 2 thr (ms) | aborts (2 thr) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in workloads:
        lines.append(
            f"| {row['workload']} | {row['plain_1t_per_s']:.2f} | {row['plain_2t_per_s']:.2f} | "
            f"{row['stm_1t_per_s']:.2f} | {row['stm_2t_per_s']:.2f} | "
            f"{row['stm_speedup_2t']:.2f}x | {row['stm_overhead_1t']:.2f}x / "
            f"{row['stm_overhead_cpu']:.2f}x | {row['stm_1t_cpu_ms']:.1f} / "
            f"{row['stm_2t_cpu_ms']:.1f} | {row['stm_2t_aborts']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    logger.info("interpreter %s, GIL %s", sys.version.split()[0], "enabled" if gil else "disabled")
    n, repeats, primes_n, per_thread = ((20_000, 2, 3000, 2) if args.quick
                                        else (200_000, 3, 10_000, 3))
    plain, stm_mod = load_workloads()
    barriers = barrier_costs(plain, stm_mod, n, repeats)
    goal = (99, 99)
    grid, corner, far_corner = game_map()
    workloads = [
        scaling(f"primes up to {primes_n}", lambda: plain.primes_up_to(primes_n),
                lambda: stm_mod.primes_up_to(primes_n), per_thread, repeats),
        scaling("A-star 100x100 shared grid", lambda: plain.astar((0, 0), goal),
                lambda: stm_mod.astar((0, 0), goal), per_thread * 4, repeats),
        scaling("A-star game 96x64 map (apps)",
                lambda: plain.shortest_path(grid, corner, far_corner),
                lambda: stm_mod.shortest_path(grid, corner, far_corner), per_thread * 16, repeats),
    ]
    if plain.astar((0, 0), goal) != stm_mod.astar((0, 0), goal) \
            or plain.shortest_path(grid, corner, far_corner) \
            != stm_mod.shortest_path(grid, corner, far_corner):
        logger.error("an instrumented A-star disagrees with the plain one")
        return 1
    backend = f"{fastpath.BACKEND} ({fastpath.REASON})" if fastpath.REASON else fastpath.BACKEND
    if args.json:
        print(json.dumps({"backend": backend, "barriers": barriers, "workloads": workloads},
                         indent=2))
    else:
        print(markdown(barriers, workloads, backend))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
