"""Rerun generated programs: ``python -m tests.stm.difftest FAMILY SEED``.

Prints the program's source, then runs it under the STM (``--plain``: on
plain threads without the STM; ``--serial``: one call after another) as
many times as ``--runs`` says, and prints what each run showed.
``--programs N`` runs the N programs of seeds SEED..SEED+N-1 instead (their
sources are not printed) and ends each with a line ``program NAME broken``
or ``program NAME ok``. Exits 1 if some run broke an invariant. Run it from
the repository root.

The plain-threads check of the test suite runs here, in a child process:
racing plain threads can crash the free-threaded interpreter itself (3.13t's
C ``OrderedDict`` is not safe to iterate while another thread changes it),
and a crash must not take the test session with it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tests.stm.difftest.families import FAMILIES, generate
from tests.stm.difftest.runner import load, run_concurrent, run_serial


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.stm.difftest")
    parser.add_argument("family", choices=sorted(FAMILIES))
    parser.add_argument("seed", type=int)
    parser.add_argument("--calls", type=int, default=40, help="calls per thread")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--programs", type=int, default=0,
                        help="run this many programs (seeds SEED, SEED+1, ...), sources not printed")
    parser.add_argument("--plain", action="store_true", help="no STM: plain threads")
    parser.add_argument("--serial", action="store_true", help="no STM, one call after another")
    parser.add_argument("--quiet", action="store_true", help="do not print the source")
    args = parser.parse_args(argv)
    seeds = range(args.seed, args.seed + max(1, args.programs))
    broken_programs = 0
    with tempfile.TemporaryDirectory() as directory:
        for seed in seeds:
            program = generate(args.family, seed, calls_per_thread=args.calls)
            if not (args.quiet or args.programs):
                print(program.source)
            broken = 0
            for run in range(args.runs):
                module = load(program, Path(directory),
                              instrumented=not (args.plain or args.serial))
                if args.serial:
                    outcome = run_serial(program, module)
                else:
                    outcome = run_concurrent(program, module, queue=False if args.plain else None)
                broken += outcome.broken
                print(f"run {run + 1}: {outcome.summary()} ({outcome.seconds:.2f}s)", flush=True)
            if args.programs:
                print(f"program {program.name} {'broken' if broken else 'ok'}", flush=True)
            broken_programs += bool(broken)
    return 1 if broken_programs else 0


if __name__ == "__main__":
    sys.exit(main())
