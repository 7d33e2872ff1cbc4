"""Memory soak: does ``tornado-stm serve`` keep a flat RSS under a long mixed load?

    python -m bench.soak [--rounds 5] [--per-round 100000] [--threads 2]

Serves the demo apps (``apps.demo:make_app``) on a free loopback port and
sends rounds of PER_ROUND requests from CONCURRENCY keep-alive clients: mostly
hello world, with a CPU-bound ``/primes`` and ``/fib`` now and then, A-star
static files and redirects, a 404, and one request in 20 on a fresh
connection that is closed after it (accept and close paths too). After each
round it reads the server's RSS from ``/proc``; it prints one line per
round and a summary: growth from the first round (the warm-up) to the last,
per 100,000 requests. Not part of ``make test``: a 5-round run takes a few
minutes on 2 cores. Exit 1 when the growth exceeds ``--max-growth-mb``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import time

from testsupport.serverproc import REPO_ROOT, free_port, start_server

#: (path, keep the connection) cycled by every client.
MIX = ([("/", True)] * 30 + [("/primes/500", True), ("/fib/12", True),
                              ("/astar", True), ("/astar/", True), ("/no/such/page", True),
                              ("/", False)])


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def _one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str,
               keep: bool) -> int:
    connection = "keep-alive" if keep else "close"
    writer.write(f"GET {path} HTTP/1.1\r\nHost: soak\r\nConnection: {connection}\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = [int(line.split(b":")[1]) for line in lines
              if line.lower().startswith(b"content-length:")]
    if length:
        await reader.readexactly(length[0])
    elif any(line.lower() == b"transfer-encoding: chunked" for line in lines):
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    return status


async def _round(port: int, requests: int, concurrency: int, offset: int) -> dict[int, int]:
    counter = itertools.count()
    statuses: dict[int, int] = {}

    async def client(number: int) -> None:
        mix = itertools.islice(itertools.cycle(MIX), (offset + number * 7) % len(MIX), None)
        reader = writer = None
        while next(counter) < requests:
            path, keep = next(mix)
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            status = await _one(reader, writer, path, keep)
            statuses[status] = statuses.get(status, 0) + 1
            if not keep:
                writer.close()
                reader = writer = None
        if writer is not None:
            writer.close()

    await asyncio.gather(*(client(n) for n in range(concurrency)))
    return statuses


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak",
                                     description="RSS of tornado-stm serve per 100k requests "
                                     "of a mixed load")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of requests (default 5)")
    parser.add_argument("--per-round", type=int, default=100_000,
                        help="requests per round (default 100000)")
    parser.add_argument("--concurrency", type=int, default=16, help="clients (default 16)")
    parser.add_argument("--threads", type=int, default=2, help="server threads (default 2)")
    parser.add_argument("--max-growth-mb", type=float, default=1.0,
                        help="per 100k requests after the first round (default 1.0)")
    parser.add_argument("--server", nargs=argparse.REMAINDER, default=None,
                        help="another server command to soak instead (with {port})")
    args = parser.parse_args()
    if args.rounds < 2 or args.per_round < 1 or args.concurrency < 1:
        parser.error("--rounds needs at least 2, --per-round and --concurrency at least 1")
    port = free_port()
    argv = ([part.replace("{port}", str(port)) for part in args.server] if args.server else
            [sys.executable, "-m", "tornado_stm", "serve", "apps.demo:make_app",
             "--port", str(port), "--threads", str(args.threads), "--no-access-log"])
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [REPO_ROOT, os.environ.get("PYTHONPATH")]))}
    server = start_server(argv, port, f"/tmp/soak-{port}.out", env=env)
    samples: list[int] = []
    try:
        print(f"soak: {' '.join(argv[1:4])}... on port {port}, {args.rounds} x {args.per_round} "
              f"requests, {args.concurrency} clients", flush=True)
        for number in range(args.rounds):
            started = time.monotonic()
            statuses = asyncio.run(_round(port, args.per_round, args.concurrency, number))
            seconds = time.monotonic() - started
            samples.append(rss_kb(server.process.pid))
            print(f"round {number + 1}: {args.per_round / seconds:,.0f} req/s, "
                  f"RSS {samples[-1] / 1024:.1f} MB, statuses {dict(sorted(statuses.items()))}",
                  flush=True)
    finally:
        server.stop()
    per_100k = (samples[-1] - samples[0]) / 1024 / ((len(samples) - 1) * args.per_round / 100_000)
    print(f"soak: RSS {samples[0] / 1024:.1f} MB after the warm-up round, "
          f"{samples[-1] / 1024:.1f} MB at the end: {per_100k:+.2f} MB per 100k requests")
    return 0 if per_100k <= args.max_growth_mb else 1


if __name__ == "__main__":
    sys.exit(main())
