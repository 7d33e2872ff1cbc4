"""Hold many concurrent keep-alive connections to ``tornado-stm serve``, and use each twice.

    python -m bench.connections [--connections 10000] [--threads 2]

Starts ``tornado-stm serve tests/loop/e2e_app.py``'s app on a free
loopback port with ``RLIMIT_NOFILE`` raised by the server process itself
(as ``ulimit -n`` would), raises this process's limit too, opens
CONNECTIONS connections, sends one keep-alive ``GET /hello`` on each and
keeps them all open, then sends a second request on every one. Prints
one line; exit 0 when every connection was held and answered twice.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from dataclasses import dataclass

from bench.with_nofile import raise_nofile
from testsupport.serverproc import REPO_ROOT, free_port, start_server

REQUEST = b"GET /hello HTTP/1.1\r\nHost: bench\r\n\r\n"
APP_DIR = os.path.join(REPO_ROOT, "tests", "loop")


@dataclass
class Result:
    connections: int
    held: int
    answered_twice: int
    server_rss_mb: float
    seconds: float

    def line(self) -> str:
        return (f"{self.held}/{self.connections} keep-alive connections held open at once, "
                f"{self.answered_twice} answered twice; server RSS {self.server_rss_mb:.0f} MB; "
                f"{self.seconds:.1f}s")


async def _ask(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    writer.write(REQUEST)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    await reader.readexactly(length)
    return head.startswith(b"HTTP/1.1 200")


async def _hold(port: int, count: int, timeout: float) -> tuple[int, int]:
    opening = asyncio.Semaphore(200)  # connect in waves, as a crowd of clients would
    streams: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def open_one() -> None:
        async with opening:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            if await _ask(reader, writer):
                streams.append((reader, writer))
            else:
                writer.close()

    results = await asyncio.wait_for(
        asyncio.gather(*(open_one() for _ in range(count)), return_exceptions=True), timeout)
    held = len(streams)
    del results
    again = await asyncio.wait_for(
        asyncio.gather(*(_ask(r, w) for r, w in streams), return_exceptions=True), timeout)
    twice = sum(1 for outcome in again if outcome is True)
    for _reader, writer in streams:
        writer.close()
    return held, twice


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run(connections: int = 10000, threads: int = 2, timeout: float = 240.0,
        out_dir: str = "/tmp") -> Result:
    needed = connections + 200
    if raise_nofile(needed) < needed:
        raise RuntimeError(f"RLIMIT_NOFILE cannot be raised to {needed} here (hard limit)")
    port = free_port()
    argv = [sys.executable, "-m", "bench.with_nofile", str(needed), sys.executable, "-m",
            "tornado_stm", "serve", "e2e_app:make_app", "--port", str(port),
            "--threads", str(threads), "--no-access-log"]
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [REPO_ROOT, os.environ.get("PYTHONPATH")]))}
    server = start_server(argv, port, os.path.join(out_dir, f"connections-{port}.out"),
                          cwd=APP_DIR, probe="/hello", env=env)
    try:
        started = time.monotonic()
        held, twice = asyncio.run(_hold(port, connections, timeout))
        seconds = time.monotonic() - started
        rss = _rss_mb(server.process.pid)
    finally:
        server.stop()
    return Result(connections, held, twice, rss, seconds)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.connections", description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=10000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    result = run(args.connections, args.threads)
    print(result.line())
    return 0 if result.held == result.answered_twice == result.connections else 1


if __name__ == "__main__":
    sys.exit(main())
