"""What the transactional event loop costs, and what pipelining changes.

    python -m bench.bench_loop [--seconds 5] [--connections 32]

Run it with the interpreter to measure (``.venv-ft/bin/python`` for the
free-threaded one). It serves tests/loop/e2e_app.py, on loopback, with:

1. *Loop cost*, ``GET /hello`` under wrk: stock Tornado on asyncio's loop;
   ``tornado-stm serve --backend serial`` (the transactional loop, one
   thread, no instrumentation: the loop alone); ``tornado-stm serve`` with
   1 and 2 threads (the loop plus the STM engine's sections, when the
   engine is present).
2. *Pipelining*: ``GET /hello`` under wrk while a second wrk keeps
   ``/parallel/20000`` busy (handlers whose sections leave the world
   lock), ``tornado-stm serve --threads 2`` with pipelining on and off.

Every figure comes from one run, side by side; the printed table gives
ratios to stock. Timings belong here, never in the tests.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Optional

from bench.loadgen import Load, run_wrk
from bench.serverproc import REPO_ROOT, free_port, start_server

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
                          "--port", "{port}", "--shutdown-timeout", "2", *options])


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
                    target=run_wrk, args=(f"{process.url}{background_path}", 4, seconds + 2, 1))
                background.start()
            load = run_wrk(f"{process.url}{path}", connections, seconds)
            if background:
                background.join()
            return load
        finally:
            process.stop()


def row(label: str, load: Load, reference: Optional[Load]) -> str:
    ratio = f"{load.requests_per_second / reference.requests_per_second:.2f}" if reference else "1.00"
    p99 = f"{load.p99_ms:.1f}" if load.p99_ms is not None else "?"
    return (f"| {label} | {load.requests_per_second:.0f} | {ratio} | {p99} | "
            f"{load.failures} |")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="each wrk run (default 5)")
    parser.add_argument("--connections", type=int, default=32,
                        help="wrk connections for /hello (default 32)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    header = "| server | req/s | ratio | p99 ms | failures |\n|---|---|---|---|---|"

    print(f"interpreter: {sys.version.split()[0]} {sys.executable}", flush=True)
    print(f"\n1. loop cost: GET /hello, wrk {args.connections} connections, "
          f"{args.seconds:.0f} s each\n\n{header}", flush=True)
    reference = None
    for server in [stock_server(),
                   stm_server("tornado-stm, transactional loop only (--backend serial)",
                              "--backend", "serial"),
                   stm_server("tornado-stm, 1 thread", "--threads", "1"),
                   stm_server("tornado-stm, 2 threads", "--threads", "2")]:
        logger.info("measuring %s", server.label)
        load = measure(server, "/hello", args.seconds, args.connections)
        print(row(server.label, load, reference), flush=True)
        reference = reference or load

    print(f"\n2. pipelining: GET /hello, wrk 8 connections, while 4 more connections "
          f"keep /parallel/20000 busy\n\n{header}", flush=True)
    reference = None
    for server in [stm_server("tornado-stm, 2 threads, pipelining on", "--threads", "2"),
                   stm_server("tornado-stm, 2 threads, pipelining off", "--threads", "2",
                              "--no-pipelining")]:
        logger.info("measuring %s", server.label)
        load = measure(server, "/hello", args.seconds, 8, background_path="/parallel/20000")
        print(row(server.label, load, reference), flush=True)
        reference = reference or load
    return 0


if __name__ == "__main__":
    sys.exit(main())
