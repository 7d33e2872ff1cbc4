"""What the transactional event loop costs, and what pipelining changes.

    python -m bench.bench_loop [--seconds 5] [--connections 32] [--rounds 3]

Run it with the interpreter to measure (``.venv-ft/bin/python`` for the
free-threaded one). It serves tests/loop/e2e_app.py, on loopback, with:

1. *Loop cost*, ``GET /hello`` under wrk: stock Tornado on asyncio's loop;
   ``tornado-stm serve --backend serial`` (the transactional loop, one
   thread, no instrumentation: the loop alone); ``tornado-stm serve`` with
   1 and 2 threads (the loop plus the STM engine's sections, when the
   engine is present).
2. *Pipelining*: ``GET /hello`` under wrk while one more connection
   keeps ``/parallel/20000`` busy (a handler whose section leaves the
   world lock), ``tornado-stm serve --threads 2`` with pipelining on and
   off: with it, the second thread keeps serving /hello while the first
   computes; without it, /hello waits for the end of each batch.

The configurations take turns, ``--rounds`` times, so that a noisy
machine slows them all alike; the table gives each one's median and its
ratio to the first row. Timings belong here, never in the tests.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Optional

from bench.loadgen import Load, run_wrk
from testsupport.serverproc import REPO_ROOT, free_port, start_server

logger = logging.getLogger("bench.bench_loop")

APP_DIR = os.path.join(REPO_ROOT, "tests", "loop")


@dataclass
class Server:
    """How to start one server configuration; ``{port}`` is filled in."""

    label: str
    argv: list[str]


def stock_server() -> Server:
    return Server("stock Tornado (asyncio loop)",
                  [sys.executable, os.path.join(APP_DIR, "e2e_app.py"), "--port", "{port}"])


def stm_server(label: str, *options: str) -> Server:
    return Server(label, [sys.executable, "-m", "tornado_stm", "serve", "e2e_app:make_app",
                          "--port", "{port}", "--shutdown-timeout", "2", "--no-access-log",
                          *options])


def measure(server: Server, path: str, seconds: float, connections: int,
            background_path: Optional[str] = None) -> Load:
    """Start ``server``, load ``path`` with wrk (and ``background_path`` with a second wrk)."""
    port = free_port()
    argv = [part.replace("{port}", str(port)) for part in server.argv]
    with tempfile.TemporaryDirectory() as tmp:
        process = start_server(argv, port, os.path.join(tmp, "server.out"), cwd=APP_DIR,
                               probe="/hello", env={"PYTHONPATH": REPO_ROOT})
        try:
            background = None
            if background_path:
                background = threading.Thread(
                    target=run_wrk, args=(f"{process.url}{background_path}", 1, seconds + 2, 1))
                background.start()
            load = run_wrk(f"{process.url}{path}", connections, seconds)
            if background:
                background.join()
            return load
        finally:
            process.stop()


def compare(servers: list[Server], path: str, args: argparse.Namespace, connections: int,
            background_path: Optional[str] = None) -> None:
    """Measure ``servers`` in turns and print one table row each (medians)."""
    loads: dict[str, list[Load]] = {server.label: [] for server in servers}
    for round_number in range(1, args.rounds + 1):
        for server in servers:
            logger.info("round %d/%d: %s", round_number, args.rounds, server.label)
            loads[server.label].append(
                measure(server, path, args.seconds, connections, background_path))
    print("| server | req/s (median) | ratio | p99 ms (median) | failures |\n"
          "|---|---|---|---|---|")
    reference = None
    for server in servers:
        runs = loads[server.label]
        rate = statistics.median(load.requests_per_second for load in runs)
        p99s = [load.p99_ms for load in runs if load.p99_ms is not None]
        p99 = f"{statistics.median(p99s):.1f}" if p99s else "?"
        reference = reference or rate
        print(f"| {server.label} | {rate:.0f} | {rate / reference:.2f} | {p99} | "
              f"{sum(load.failures for load in runs)} |", flush=True)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="each wrk run (default 5)")
    parser.add_argument("--connections", type=int, default=32,
                        help="wrk connections for /hello (default 32)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="turns of every configuration (default 3)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")

    print(f"interpreter: {sys.version.split()[0]} {sys.executable}", flush=True)
    print(f"\n1. loop cost: GET /hello, wrk {args.connections} connections, "
          f"{args.seconds:.0f} s a run, {args.rounds} rounds\n", flush=True)
    compare([stock_server(),
             stm_server("tornado-stm, transactional loop only (--backend serial)",
                        "--backend", "serial"),
             stm_server("tornado-stm, 1 thread", "--threads", "1"),
             stm_server("tornado-stm, 2 threads", "--threads", "2")],
            "/hello", args, args.connections)

    print("\n2. pipelining: GET /hello, wrk 8 connections, while one more connection "
          "keeps /parallel/20000 busy\n", flush=True)
    compare([stm_server("tornado-stm, 2 threads, pipelining on", "--threads", "2"),
             stm_server("tornado-stm, 2 threads, pipelining off", "--threads", "2",
                        "--no-pipelining")],
            "/hello", args, 8, background_path="/parallel/20000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
