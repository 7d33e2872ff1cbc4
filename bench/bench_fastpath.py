"""What the C fast path of the barriers buys: pure-Python barriers against C ones, in one run.

``python bench/bench_fastpath.py`` runs the same measurements three times,
each in its own interpreter process (the barrier implementation is chosen
at import): ``plain`` (uninstrumented code), ``pure`` (instrumented,
``TORNADO_STM_PURE=1``) and ``c`` (instrumented, the C extension). It
prints one table with the three side by side:

* barrier cost per read and per write, inside and outside an atomic
  section (ns per operation, the loop overhead subtracted);
* primes up to 10000 (``apps.primes.primes_up_to``, few shared accesses)
  and A-star over a shared 100x100 grid (``apps.astar_game.shortest_path``)
  with 1 and 2 threads: the time of one call at 1 thread, the overhead
  against plain code, and the speed-up of 2 threads over 1.

``--quick`` shortens every run. ``--json FILE`` also writes the numbers.
Timings are only compared within one run of this script, on one machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
MODES = ("plain", "pure", "c")

# The micro-benchmark: one function per operation, each a loop of N
# operations; EMPTY is the loop alone. Written as source so that it can be
# compiled plain or instrumented.
MICRO_SOURCE = '''
class Thing:
    def __init__(self):
        self.value = 1

SHARED_OBJ = Thing()
SHARED_LIST = list(range(100))
SHARED_DICT = {i: i for i in range(100)}

def EMPTY(n, obj, lst, dct):
    for i in range(n):
        pass

def READ_ATTR(n, obj, lst, dct):
    for i in range(n):
        obj.value

def READ_ITEM_LIST(n, obj, lst, dct):
    for i in range(n):
        lst[7]

def READ_ITEM_DICT(n, obj, lst, dct):
    for i in range(n):
        dct[7]

def READ_PRIVATE(n, obj, lst, dct):
    mine = [1, 2, 3]
    for i in range(n):
        mine[1]

def WRITE_ATTR(n, obj, lst, dct):
    for i in range(n):
        obj.value = i

def WRITE_ITEM_DICT(n, obj, lst, dct):
    for i in range(n):
        dct[7] = i

def CALL_BUILTIN(n, obj, lst, dct):
    for i in range(n):
        abs(i)
'''
MICRO_OPS = ("READ_ATTR", "READ_ITEM_LIST", "READ_ITEM_DICT", "READ_PRIVATE", "WRITE_ATTR",
             "WRITE_ITEM_DICT", "CALL_BUILTIN")


def load(path: Path | None, name: str, instrumented: bool, source: str | None = None) -> ModuleType:
    """A module from ``path`` (or ``source``), compiled plain or instrumented."""
    text = source if source is not None else path.read_text()
    filename = str(path) if path is not None else f"<{name}>"
    module = ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module              # dataclasses look the module up
    if instrumented:
        from tornado_stm.instrument import compile_instrumented
        from tornado_stm.instrument.hook import prepare_namespace
        prepare_namespace(module.__dict__)
        exec(compile_instrumented(text, filename), module.__dict__)
    else:
        exec(compile(text, filename, "exec"), module.__dict__)
    return module


def best_of(repeat: int, fn, *args) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def micro(mode: str, n: int, repeat: int) -> dict[str, float]:
    """ns per operation, inside ("in") and outside ("out") a section."""
    module = load(None, "bench_fastpath_micro", mode != "plain", MICRO_SOURCE)
    args = (n, module.SHARED_OBJ, module.SHARED_LIST, module.SHARED_DICT)
    results: dict[str, float] = {}
    for where in ("in", "out"):
        if mode == "plain" and where == "out":
            continue

        def run(name: str) -> float:
            fn = getattr(module, name)
            # The entry wrapper starts a section; the wrapped function runs outside any.
            if where == "out" and mode != "plain":
                fn = fn.__wrapped__
            return best_of(repeat, fn, *args)

        empty = run("EMPTY")
        for op in MICRO_OPS:
            results[f"{op} {where}"] = max(0.0, (run(op) - empty) / n * 1e9)
    return results


def in_threads(count: int, calls: int, fn, *args) -> float:
    """Seconds for ``count`` threads each making ``calls`` calls."""
    barrier = threading.Barrier(count + 1)

    def body() -> None:
        barrier.wait()
        for _ in range(calls):
            fn(*args)

    threads = [threading.Thread(target=body) for _ in range(count)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def workloads(mode: str, calls: int, repeat: int) -> dict[str, float]:
    """Seconds per call at 1 thread and 2-thread speed-up for primes and A-star."""
    instrumented = mode != "plain"
    primes = load(ROOT / "apps" / "primes.py", "bench_fastpath_primes", instrumented)
    game = load(ROOT / "apps" / "astar_game.py", "bench_fastpath_astar", instrumented)
    # The grid is built outside any section: shared, as in the game.
    grid = [[0] * 100 for _ in range(100)]
    for y in range(5, 95, 10):                          # walls with gaps: a long detour
        for x in range(100):
            if (x // 10) % 2 != (y // 10) % 2 and x % 10 != 5:
                grid[y][x] = 1
    results: dict[str, float] = {}
    for name, fn, args in (("primes", primes.primes_up_to, (10000,)),
                           ("astar", game.shortest_path, (grid, (0, 0), (99, 99)))):
        assert fn(*args), name
        one = min(in_threads(1, calls, fn, *args) for _ in range(repeat))
        two = min(in_threads(2, calls, fn, *args) for _ in range(repeat))
        results[f"{name} s/call"] = one / calls
        results[f"{name} 2t speedup"] = 2 * one / two
    return results


def child(mode: str, quick: bool) -> dict[str, float]:
    n = 20_000 if quick else 200_000
    repeat = 3 if quick else 5
    results = micro(mode, n, repeat)
    results.update(workloads(mode, 2 if quick else 6, 2 if quick else 3))
    from tornado_stm.stm import fastpath
    results["backend"] = fastpath.BACKEND if mode != "plain" else "plain"
    results["gil"] = getattr(sys, "_is_gil_enabled", lambda: True)()
    return results


def run_mode(mode: str, quick: bool) -> dict:
    env = dict(os.environ)
    env.pop("TORNADO_STM_PURE", None)
    if mode == "pure":
        env["TORNADO_STM_PURE"] = "1"
    out = subprocess.run([sys.executable, __file__, "--child", mode] + (["--quick"] if quick else []),
                         env=env, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def report(results: dict[str, dict]) -> str:
    plain, pure, c = (results[m] for m in MODES)
    lines = [f"interpreter: {sys.version.split()[0]} "
             f"{'(GIL disabled)' if not plain['gil'] else '(GIL)'}; backends: {pure['backend']}, "
             f"{c['backend']}", "",
             "| barrier (ns/op) | plain | pure Python in / out | C in / out |",
             "|---|---:|---:|---:|"]
    for op in MICRO_OPS:
        lines.append(f"| {op.lower()} | {plain[op + ' in']:.0f} | {pure[op + ' in']:.0f} / "
                     f"{pure[op + ' out']:.0f} | {c[op + ' in']:.0f} / {c[op + ' out']:.0f} |")
    lines += ["", "| workload | plain ms/call | pure ms (x plain) | C ms (x plain) "
              "| 2-thread speed-up plain / pure / C |", "|---|---:|---:|---:|---:|"]
    for name in ("primes", "astar"):
        p, q, r = (m[f"{name} s/call"] for m in (plain, pure, c))
        lines.append(f"| {name} | {p * 1e3:.1f} | {q * 1e3:.1f} ({q / p:.2f}x) | "
                     f"{r * 1e3:.1f} ({r / p:.2f}x) | "
                     + " / ".join(f"{m[f'{name} 2t speedup']:.2f}" for m in (plain, pure, c))
                     + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs")
    parser.add_argument("--json", help="also write the numbers to this file")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(child(options.child, options.quick)))
        return
    results = {mode: run_mode(mode, options.quick) for mode in MODES}
    print(report(results))
    if options.json:
        Path(options.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
