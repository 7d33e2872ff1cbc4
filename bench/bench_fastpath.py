"""What the C fast path of the barriers buys: pure-Python barriers against C ones, in one run.

``python bench/bench_fastpath.py`` runs the same measurements twice, each
time in its own interpreter process (the barrier implementation is chosen
at import): with ``TORNADO_STM_PURE=1`` (pure-Python barriers) and with the
C extension. Each process measures plain (uninstrumented) code and
instrumented code side by side, alternating them, so every ratio comes
from one process. It prints:

* barrier cost per read, write and call, inside and outside an atomic
  section (ns per operation, the loop overhead subtracted), against the
  plain operation;
* primes up to 10000 (``apps.primes.primes_up_to``, few shared accesses)
  and A-star over the game's shared 100x100 grid
  (``apps.astar_game.shortest_path``), each call one atomic section, with
  1 and 2 threads: time per call, overhead against plain code (wall clock
  and CPU time of the calling threads), and the speed-up of 2 threads.

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
MODES = ("pure", "c")

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


def micro(n: int, repeat: int) -> dict[str, float]:
    """ns per operation: plain code, and barriers inside ("in") and outside ("out") a section."""
    plain = load(None, "bench_fastpath_micro_plain", False, MICRO_SOURCE)
    module = load(None, "bench_fastpath_micro", True, MICRO_SOURCE)
    results: dict[str, float] = {}
    for where, mod in (("plain", plain), ("in", module), ("out", module)):
        args = (n, mod.SHARED_OBJ, mod.SHARED_LIST, mod.SHARED_DICT)

        def run(name: str) -> float:
            fn = getattr(mod, name)
            # The entry wrapper starts a section; the wrapped function runs outside any.
            if where == "out":
                fn = fn.__wrapped__
            return best_of(repeat, fn, *args)

        empty = run("EMPTY")
        for op in MICRO_OPS:
            results[f"{op} {where}"] = max(0.0, (run(op) - empty) / n * 1e9)
    return results


def in_threads(count: int, calls: int, fn, *args) -> tuple[float, float]:
    """Wall-clock seconds for ``count`` threads each making ``calls`` calls, and
    the CPU seconds per call (``time.thread_time``, which the machine's other
    load does not inflate)."""
    barrier = threading.Barrier(count + 1)
    cpu: list[float] = []

    def body() -> None:
        barrier.wait()
        start = time.thread_time()
        for _ in range(calls):
            fn(*args)
        cpu.append(time.thread_time() - start)

    threads = [threading.Thread(target=body) for _ in range(count)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start, sum(cpu) / (count * calls)


def workloads(quick: bool, repeat: int) -> dict[str, float]:
    """Primes and A-star, plain and instrumented, 1 and 2 threads.

    Plain and instrumented runs alternate, and each figure is the best of
    ``repeat``, so that a change in the machine's load affects both alike.
    """
    results: dict[str, float] = {}
    grid = None
    for kind in ("plain", "stm"):
        primes = load(ROOT / "apps" / "primes.py", f"bench_fastpath_primes_{kind}", kind == "stm")
        game = load(ROOT / "apps" / "astar_game.py", f"bench_fastpath_astar_{kind}",
                    kind == "stm")
        if grid is None:
            # The game's own random map, built outside any section: shared, as in the game.
            grid = game.random_grid(100, 100, 0.25, 2014)
            grid[0][0] = grid[99][99] = 0
        for name, fn, args, calls in (
                ("primes", primes.primes_up_to, (10000,), 1 if quick else 2),
                ("astar", game.shortest_path, (grid, (0, 0), (99, 99)), 40 if quick else 200)):
            assert fn(*args), name
            results[f"{name} {kind}"] = (fn, args, calls)
    out: dict[str, float] = {}
    for name in ("primes", "astar"):
        best: dict[tuple[str, int], tuple[float, float]] = {}
        for _ in range(repeat):
            for threads in (1, 2):
                for kind in ("plain", "stm"):
                    fn, args, calls = results[f"{name} {kind}"]
                    wall, cpu = in_threads(threads, calls, fn, *args)
                    key = (kind, threads)
                    old = best.get(key, (float("inf"), float("inf")))
                    best[key] = (min(old[0], wall / calls), min(old[1], cpu))
        for kind in ("plain", "stm"):
            out[f"{name} {kind} s/call"] = best[(kind, 1)][0]
            out[f"{name} {kind} cpu/call"] = best[(kind, 1)][1]
            out[f"{name} {kind} cpu/call 2t"] = best[(kind, 2)][1]
            out[f"{name} {kind} 2t speedup"] = 2 * best[(kind, 1)][0] / best[(kind, 2)][0]
    return out


def child(mode: str, quick: bool) -> dict[str, float]:
    n = 20_000 if quick else 200_000
    repeat = 3 if quick else 5
    results = micro(n, repeat)
    results.update(workloads(quick, 2 if quick else 3))
    from tornado_stm.stm import fastpath
    results["backend"] = fastpath.BACKEND
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
    pure, c = (results[m] for m in MODES)
    lines = [f"interpreter: {sys.version.split()[0]} "
             f"{'(GIL disabled)' if not c['gil'] else '(GIL)'}; backends: {pure['backend']}, "
             f"{c['backend']}", "",
             "| barrier (ns/op, loop subtracted) | plain | pure Python in / out | C in / out |",
             "|---|---:|---:|---:|"]
    for op in MICRO_OPS:
        lines.append(f"| {op.lower()} | {c[op + ' plain']:.0f} | {pure[op + ' in']:.0f} / "
                     f"{pure[op + ' out']:.0f} | {c[op + ' in']:.0f} / {c[op + ' out']:.0f} |")
    lines += ["", "| workload | backend | plain ms/call | STM ms/call | STM overhead wall / CPU "
              "| 2-thread speed-up plain / STM | CPU ms/call 1 / 2 threads: plain; STM |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for name in ("primes", "astar"):
        for label, m in (("pure Python", pure), ("C", c)):
            p, s = m[f"{name} plain s/call"], m[f"{name} stm s/call"]
            pc, sc = m[f"{name} plain cpu/call"], m[f"{name} stm cpu/call"]
            lines.append(
                f"| {name} | {label} | {p * 1e3:.1f} | {s * 1e3:.1f} | {s / p:.2f}x / {sc / pc:.2f}x "
                f"| {m[f'{name} plain 2t speedup']:.2f} / {m[f'{name} stm 2t speedup']:.2f} "
                f"| {pc * 1e3:.1f} / {m[f'{name} plain cpu/call 2t'] * 1e3:.1f}; "
                f"{sc * 1e3:.1f} / {m[f'{name} stm cpu/call 2t'] * 1e3:.1f} |")
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
