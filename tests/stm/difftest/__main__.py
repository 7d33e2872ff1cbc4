"""Rerun one generated program: ``python -m tests.stm.difftest FAMILY SEED``.

Prints the program's source, then runs it under the STM (``--plain``: on
plain threads without the STM; ``--serial``: one call after another) as
many times as ``--runs`` says, and prints what each run showed. Exits 1 if
some run broke an invariant. Run it from the repository root.
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
    parser.add_argument("--plain", action="store_true", help="no STM: plain threads")
    parser.add_argument("--serial", action="store_true", help="no STM, one call after another")
    parser.add_argument("--quiet", action="store_true", help="do not print the source")
    args = parser.parse_args(argv)
    program = generate(args.family, args.seed, calls_per_thread=args.calls)
    if not args.quiet:
        print(program.source)
    broken = 0
    with tempfile.TemporaryDirectory() as directory:
        for run in range(args.runs):
            module = load(program, Path(directory), instrumented=not (args.plain or args.serial))
            if args.serial:
                outcome = run_serial(program, module)
            else:
                outcome = run_concurrent(program, module, queue=False if args.plain else None)
            broken += outcome.broken
            print(f"run {run + 1}: {outcome.summary()} ({outcome.seconds:.2f}s)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
