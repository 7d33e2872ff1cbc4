"""``make bench``: every configuration of every workload, side by side, in one run.

Workloads (see docs/benchmarks.md for what each row means):

* ``primes``: ``GET /primes/10000`` loaded by siege with 50 concurrent users,
  as in 2014 (``siege -c 50 -t 20s``);
* ``astar``: ``bench_astar``'s simulated players, which check the game's
  rules on every answer (any violation fails the run);
* ``astar2014``: the same players in the search-heavy mix (long searches
  for far goals) on the game's large map (``apps.astar_large``, 200 x 200),
  shaped like the 2014 PyPy-STM benchmark; rules checked the same way;
* ``hello``: ``GET /`` loaded by wrk with 32 keep-alive connections, to show
  what the transactional loop itself costs per request against stock asyncio,
  with pipelining on and off;
* ``mixed``: hello world on 8 connections while one siege user keeps asking
  for primes: how long quick requests wait behind a slow handler, which is
  what pipelining (polling while sections run) is for;
* ``async``: ``GET /work`` of ``apps.asyncmix`` loaded by wrk with 16
  keep-alive connections: an ``async def`` handler that awaits a 5 ms timer,
  then computes (about 5 ms of trial division).

``--stm-serve-args`` runs every tornado-stm row once per set of extra
``tornado-stm serve`` arguments (e.g. once per loop mode).

Each configuration's server is started on a free loopback port, warmed up,
measured and stopped; tornado-stm servers write a PYPYSTM log, which
``stmlog`` turns into aborts and inevitable transitions. The results go to
``bench/results/<time>/`` (and ``bench/results/latest``) as JSON, a markdown
table and a PNG plot; ``--update-docs`` also puts them in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import logging
import os
import platform
import re
import shlex
import shutil
import sys
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable

from bench import report
from bench.bench_astar import run_players
from bench.configs import WORKLOADS, Config, all_configs
from bench.loadgen import LoadFailed, run_siege, run_wrk
from bench.stmstats import stm_stats
from testsupport.serverproc import REPO_ROOT, ServerFailed, free_port, start_server

log = logging.getLogger("bench")

RESULTS_DIR = os.path.join(REPO_ROOT, "bench", "results")

#: The game's workloads and the bench_astar mix each plays.
ASTAR_MIXES = {"astar": "light", "astar2014": "search"}


@dataclass
class Settings:
    primes_seconds: float
    astar_seconds: float
    hello_seconds: float
    warmup_seconds: float
    primes_users: int = 50     # siege -c, as in 2014 (quick mode: 4)
    primes_n: int = 10000
    astar_players: int = 16
    hello_connections: int = 32
    mixed_connections: int = 8
    mixed_primes_users: int = 1  # one slow request at a time, always one
    async_connections: int = 16

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "Settings":
        quick = args.quick
        # Quick runs use fewer siege users: each leaves a request queued in
        # the server when siege stops, and a tornado-stm server drains that
        # queue before it can stop and write its PYPYSTM log.
        return cls(primes_users=args.primes_users or (4 if quick else 50),
                   primes_seconds=args.primes_seconds or (5 if quick else 20),
                   astar_seconds=args.astar_seconds or (5 if quick else 20),
                   hello_seconds=args.hello_seconds or (3 if quick else 10),
                   warmup_seconds=args.warmup_seconds if args.warmup_seconds is not None
                   else (1 if quick else 3))

    def load_description(self, workload: str) -> str:
        if workload == "primes":
            return (f"siege -c {self.primes_users} -t {self.primes_seconds:g}s "
                    f"/primes/{self.primes_n}")
        if workload == "astar":
            return (f"bench_astar: {self.astar_players} players for "
                    f"{self.astar_seconds:g}s, rules checked on every answer")
        if workload == "astar2014":
            return (f"bench_astar --mix search: {self.astar_players} players for "
                    f"{self.astar_seconds:g}s on a 200x200 map, rules checked on every answer")
        if workload == "hello":
            return f"wrk -c {self.hello_connections} -d {self.hello_seconds:g}s --latency /"
        if workload == "async":
            return (f"wrk -c {self.async_connections} -d {self.hello_seconds:g}s --latency "
                    f"/work (await 5 ms, then about 5 ms of CPU)")
        return (f"wrk -c {self.mixed_connections} -d {self.hello_seconds:g}s --latency / while "
                f"siege -c {self.mixed_primes_users} asks for /primes/{self.primes_n}")


def warm_up(config: Config, url: str, settings: Settings) -> list[str]:
    """Load before measuring (PyPy's JIT needs it), without leaving a backlog.

    One request at a time: a load generator stopped mid-run leaves one
    request per user queued in the server, and 50 queued primes requests
    would eat the first seconds of the measurement. Returns the game rules
    the warm-up saw broken (it is a real run too).
    """
    if config.workload in ASTAR_MIXES:  # its players wait for every answer
        result = run_players(url, players=settings.astar_players,
                             duration=settings.warmup_seconds, seed=2,
                             mix=ASTAR_MIXES[config.workload])
        return result.violations + result.failures
    path = {"primes": f"/primes/{settings.primes_n}", "async": "/work"}.get(config.workload, "/")
    deadline = time.monotonic() + settings.warmup_seconds
    connection = http.client.HTTPConnection(urllib.parse.urlsplit(url).hostname,
                                            urllib.parse.urlsplit(url).port, timeout=60)
    try:
        while True:
            connection.request("GET", path)
            connection.getresponse().read()
            if time.monotonic() >= deadline:
                break
    finally:
        connection.close()
    return []


def measure(config: Config, url: str, settings: Settings) -> dict[str, Any]:
    """Load the server at ``url`` as the workload says; a row's numbers."""
    if config.workload == "primes":
        load = run_siege(f"{url}/primes/{settings.primes_n}", settings.primes_users,
                         settings.primes_seconds)
        return load.to_json()
    if config.workload == "hello":
        return run_wrk(f"{url}/", settings.hello_connections, settings.hello_seconds).to_json()
    if config.workload == "mixed":
        with concurrent.futures.ThreadPoolExecutor(1) as background:
            slow = background.submit(run_siege, f"{url}/primes/{settings.primes_n}",
                                     settings.mixed_primes_users, settings.hello_seconds)
            row = run_wrk(f"{url}/", settings.mixed_connections, settings.hello_seconds,
                          timeout=30).to_json()
            row["background"] = slow.result().to_json()
        return row
    if config.workload == "async":
        return run_wrk(f"{url}/work", settings.async_connections, settings.hello_seconds).to_json()
    result = run_players(url, players=settings.astar_players, duration=settings.astar_seconds,
                         seed=1, mix=ASTAR_MIXES[config.workload])
    summary = result.summary()
    summary["tool"] = "bench_astar"
    # A refused move (409) is the game working; anything else is a failure.
    summary["failures"] = len(result.failures) + sum(
        count for statuses in result.by_action.values()
        for status, count in statuses.items() if status not in (200, 409))
    return summary


def run_config(config: Config, settings: Settings, out_dir: str,
               progress: Callable[[str], None]) -> dict[str, Any]:
    row: dict[str, Any] = {"workload": config.workload, "key": config.key,
                           "label": config.label, "family": config.family,
                           "interpreter": config.interpreter}
    if config.unavailable:
        progress(f"not available: {config.unavailable}")
        row["status"] = "not available"
        row["reason"] = config.unavailable
        return row
    name = f"{config.workload}-{config.key}"
    env: dict[str, str] = {}
    log_path = os.path.join(out_dir, f"{name}.pypystm")
    if config.stm_log:
        # The server never overwrites a log: an earlier round's is removed
        # here, or this round's would go to a numbered name beside it.
        if os.path.exists(log_path):
            os.remove(log_path)
        env["PYPYSTM"] = log_path
    port = free_port()
    row["command"] = " ".join(config.command(port)).replace(REPO_ROOT + "/", "")
    try:
        server = start_server(config.command(port), port, os.path.join(out_dir, f"{name}.log"),
                              env=env)
    except ServerFailed as exc:
        progress(f"FAILED to start: {str(exc).splitlines()[0]}")
        row.update(status="failed", reason=str(exc))
        return row
    try:
        warmup_violations = []
        if settings.warmup_seconds > 0:
            progress(f"warming up for {settings.warmup_seconds:g}s")
            warmup_violations = warm_up(config, server.url, settings)
        progress(f"measuring: {settings.load_description(config.workload)}")
        row.update(measure(config, server.url, settings))
        row["status"] = "ok"
        if warmup_violations:
            row["violations"] = row.get("violations", 0) + len(warmup_violations)
            row["violation_examples"] = (["during warm-up: " + v for v in warmup_violations]
                                         + row.get("violation_examples", []))[:10]
    except (LoadFailed, OSError, RuntimeError) as exc:
        row.update(status="failed", reason=f"{type(exc).__name__}: {exc}")
    finally:
        # A tornado-stm server finishes the requests queued in it, then
        # writes its PYPYSTM log: give it time, or the log is lost.
        row["server_exit"] = server.stop(timeout=90 if config.stm_log else 15)
        banner = re.search(r"backend: (.*)", server.output_head())
        if banner:
            row["backend"] = banner.group(1).strip()
    if row.get("status") == "ok" and row.get("violations"):
        row["status"] = "violations"
    if config.stm_log:
        progress("reading the PYPYSTM log")
        row["stm"] = stm_stats(log_path)
    progress(report.one_line(row))
    return row


def median_row(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One configuration's rounds as one row: the round with the median req/s.

    A failed round or one with rule violations wins instead: a bad round
    must not hide behind good ones.
    """
    bad = [r for r in runs if r.get("status") in ("failed", "violations")]
    if bad or len(runs) == 1:
        return bad[0] if bad else runs[0]
    ordered = sorted(runs, key=lambda r: r.get("requests_per_second") or 0)
    row = dict(ordered[(len(ordered) - 1) // 2])
    row["rounds_requests_per_second"] = [r.get("requests_per_second") for r in runs]
    return row


def machine_facts() -> dict[str, Any]:
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            found = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            cpu = found.group(1) if found else cpu
    except OSError:
        pass
    memory = None
    try:
        with open("/proc/meminfo") as f:
            kib = int(re.search(r"MemTotal:\s+(\d+)", f.read()).group(1))
            memory = f"{kib / 1024 / 1024:.0f} GiB"
    except (OSError, AttributeError):
        pass
    return {"cores": os.cpu_count(), "cpu": cpu, "memory": memory,
            "system": f"{platform.system()} {platform.release()}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run every benchmark configuration side by side and write JSON, "
        "a markdown table and a PNG plot.")
    parser.add_argument("--quick", action="store_true",
                        help="short runs (about 4 minutes in all), for routine use")
    parser.add_argument("--only", nargs="+", choices=WORKLOADS,
                        help="run only these workloads")
    parser.add_argument("--primes-users", type=int, help="siege concurrent users (50, quick 4)")
    parser.add_argument("--primes-seconds", type=float, help="siege duration (20, quick 5)")
    parser.add_argument("--astar-seconds", type=float,
                        help="bench_astar duration, astar and astar2014 (20, quick 5)")
    parser.add_argument("--hello-seconds", type=float,
                        help="wrk duration, hello, mixed and async (10, quick 3)")
    parser.add_argument("--warmup-seconds", type=float, help="load before measuring (3, quick 1)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run every configuration this many times, taking turns, and "
                        "report each one's median round (default 1)")
    parser.add_argument("--stm-serve-args", action="append", metavar="ARGS",
                        help="extra `tornado-stm serve` arguments, as one string; repeat it to "
                        "run every tornado-stm row once per value, e.g. "
                        "--stm-serve-args='--loop shared' --stm-serve-args='--loop per-thread'")
    parser.add_argument("--out", help="results directory (default bench/results/<UTC time>, "
                        "then copied to bench/results/latest)")
    parser.add_argument("--update-docs", action="store_true",
                        help="also write the table and plot into docs/benchmarks.md")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    settings = Settings.from_args(args)

    started = time.time()
    stamp = time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime(started))
    out_dir = args.out or os.path.join(RESULTS_DIR, stamp)
    os.makedirs(out_dir, exist_ok=True)
    cores = os.cpu_count() or 1
    variants = None if args.stm_serve_args is None else \
        [shlex.split(value) for value in args.stm_serve_args]
    configs = [c for c in all_configs(cores, variants)
               if not args.only or c.workload in args.only]

    # Configurations take turns, round after round, so that a machine
    # that gets busier or quieter during the run affects them all alike.
    runs: list[list[dict[str, Any]]] = [[] for _ in configs]
    for round_number in range(1, args.rounds + 1):
        for index, config in enumerate(configs, 1):
            if config.unavailable and round_number > 1:
                continue
            log.info("[%s%d/%d %5.0fs] %s / %s",
                     f"round {round_number}/{args.rounds}, " if args.rounds > 1 else "",
                     index, len(configs), time.time() - started, config.workload, config.label)
            runs[index - 1].append(run_config(config, settings, out_dir,
                                              lambda text: log.info("    %s", text)))
    rows = [median_row(config_runs) for config_runs in runs]

    results = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "command": "make bench-quick" if args.quick else "make bench",
        "argv": ["python", "-m", "bench.run", *(argv if argv is not None else sys.argv[1:])],
        "seconds": round(time.time() - started, 1),
        "machine": machine_facts(),
        "loads": {w: settings.load_description(w) for w in WORKLOADS},
        "rows": report.with_ratios(rows),
    }
    paths = report.write_all(results, out_dir)
    latest = os.path.join(RESULTS_DIR, "latest")
    if not args.out:
        shutil.rmtree(latest, ignore_errors=True)
        shutil.copytree(out_dir, latest, ignore=shutil.ignore_patterns("*.pypystm", "*.log"))
    if args.update_docs:
        report.update_docs(results, paths.get("png"))
    log.info("done in %.0fs: %s", time.time() - started, ", ".join(paths.values()))

    bad = [r for r in rows if r.get("status") in ("failed", "violations")]
    for r in bad:
        log.error("%s / %s: %s %s", r["workload"], r["label"], r["status"],
                  r.get("reason") or "; ".join(r.get("violation_examples", [])[:3]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
