"""Benchmark of stmlog_tools on a large synthetic C8 log, against a plain read loop.

    .venv/bin/python bench/bench_stmlog.py                 # 3 million events
    .venv/bin/python bench/bench_stmlog.py --events 300000 # a quick run

1. Builds a synthetic C8 log (final numbering) with ``stmlog_tools.writer``:
   4 threads; transactions that commit, some inevitable (with markers from
   20 source locations), some waiting for another inevitable one, some
   aborted by a write-read contention, minor GCs now and then.
2. Times, side by side in this one run (best of ``--repeat``):
   * the baseline: a straightforward pure-Python loop that only reads
     every record (``struct.unpack`` of the 14-byte header, then the
     marker), run as ``python -c``;
   * ``stmlog report FILE --json`` with the C accelerator (``--engine c``)
     and with the numpy pass (``--engine numpy``), as subprocesses;
   * the same two analyses in-process (no interpreter start or imports).
3. Checks memory stays flat: the peak RSS of ``report`` on the whole log
   against a quarter of it.

Prints a Markdown table (the one in docs/performance.md) and, with
``--json``, the raw figures.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stmlog_tools.analysis import analyse
from stmlog_tools.format import make_marker
from stmlog_tools.writer import LogWriter

log = logging.getLogger("bench_stmlog")

BASELINE_LOOP = """
import struct, sys
unpack = struct.Struct("<IIIBB").unpack
count = 0
with open(sys.argv[1], "rb") as f:
    f.read(16)
    while True:
        header = f.read(14)
        if len(header) < 14:
            break
        sec, nsec, thread, event, length = unpack(header)
        marker = f.read(length)
        count += 1
print(count)
"""


def build_log(path: Path, events: int, seed: int = 1) -> int:
    """A realistic C8 log of at least ``events`` records; returns how many were written."""
    rng = random.Random(seed)
    locations = [make_marker(f"/srv/app/module{i % 7}.py", 10 + 13 * i, f"handler_{i}")
                 for i in range(20)]
    now = 1_000_000 * 1_000_000_000   # ns of the monotonic clock
    written = 0
    progress_every = max(events // 10, 1)
    with LogWriter(path) as writer:
        while written < events:
            thread = rng.randint(1, 4)
            batch = [("TRANSACTION_START", b"")]
            roll = rng.random()
            if roll < 0.30:
                batch.append(("BECOME_INEVITABLE", rng.choice(locations)))
                if rng.random() < 0.3:
                    batch += [("WAIT_OTHER_INEVITABLE", b""), ("WAIT_DONE", b"")]
                batch.append(("TRANSACTION_COMMIT", b""))
            elif roll < 0.40:
                batch += [("CONTENTION_WRITE_READ", rng.choice(locations)),
                          ("TRANSACTION_ABORT", b"")]
            else:
                if rng.random() < 0.05:
                    batch += [("GC_MINOR_START", b""), ("GC_MINOR_DONE", b"")]
                batch.append(("TRANSACTION_COMMIT", b""))
            for name, marker in batch:
                now += rng.randint(200, 20_000)
                writer.write(name, thread, marker, timestamp=divmod(now, 1_000_000_000))
                written += 1
                if written % progress_every == 0:
                    log.info("writing the log: %d%%", 100 * written // events)
    return written


def run_timed(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def peak_rss_kib(command: list[str]) -> int:
    """Peak RSS of ``command`` alone, measured by a fresh helper process."""
    helper = ("import resource, subprocess, sys;"
              "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True);"
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", helper, *command], capture_output=True,
                         text=True, check=True).stdout
    return int(out)


def best(runs: int, command: list[str]) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = run_timed(command)
        walls.append(wall)
        cpus.append(cpu)
    return min(walls), min(cpus)


def in_process(runs: int, path: Path, engine: str) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        analyse(str(path), engine=engine)
        times.append(time.process_time() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3_000_000,
                        help="events in the synthetic log (default 3 000 000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, best kept")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build (or reuse) the log at this path instead of a temp file")
    parser.add_argument("--json", action="store_true", help="also print the raw figures")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="bench_stmlog: %(message)s")

    with tempfile.TemporaryDirectory(prefix="bench-stmlog-") as tmp:
        path = args.keep or Path(tmp) / "synthetic.log"
        quarter = Path(tmp) / "quarter.log"
        if not path.exists():
            log.info("building a %d-event log at %s", args.events, path)
            build_log(path, args.events)
        build_log(quarter, args.events // 4)
        stmlog = str(Path(sys.executable).with_name("stmlog"))
        events = analyse(str(path), engine="numpy")["event_count"]
        megabytes = path.stat().st_size / 1e6
        log.info("log: %d events, %.1f MB", events, megabytes)

        commands = {
            "baseline: pure-Python read loop": [sys.executable, "-c", BASELINE_LOOP, str(path)],
            "stmlog report --json (C accelerator)": [stmlog, "report", str(path), "--json",
                                                     "--engine", "c"],
            "stmlog report --json (numpy pass)": [stmlog, "report", str(path), "--json",
                                                  "--engine", "numpy"],
        }
        figures: dict[str, dict[str, float]] = {}
        for name, command in commands.items():
            log.info("timing %s", name)
            wall, cpu = best(args.repeat, command)
            figures[name] = {"wall": wall, "cpu": cpu, "rss_kib": peak_rss_kib(command)}
        for engine in ("c", "numpy"):
            log.info("timing analyse(engine=%s) in-process", engine)
            figures[f"analyse() in-process ({engine})"] = {
                "cpu": in_process(args.repeat, path, engine)}
        quarter_rss = {engine: peak_rss_kib([stmlog, "report", str(quarter), "--json",
                                             "--engine", engine]) for engine in ("c", "numpy")}

    base = figures["baseline: pure-Python read loop"]
    print(f"\n{events} events, {megabytes:.1f} MB, best of {args.repeat}")
    print("| what | wall s | CPU s | CPU vs baseline | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|")
    for name, f in figures.items():
        wall = f"{f['wall']:.3f}" if "wall" in f else "-"
        rss = f"{f['rss_kib'] / 1024:.0f}" if "rss_kib" in f else "-"
        print(f"| {name} | {wall} | {f['cpu']:.3f} | {base['cpu'] / f['cpu']:.1f}x | {rss} |")
    print(f"\npeak RSS of report on a quarter of the log: C {quarter_rss['c'] / 1024:.0f} MiB, "
          f"numpy {quarter_rss['numpy'] / 1024:.0f} MiB")
    if args.json:
        print(json.dumps({"events": events, "megabytes": megabytes, "figures": figures,
                          "quarter_rss_kib": quarter_rss}, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
