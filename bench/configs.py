"""The configurations the benchmark compares, and how to start each one's server.

A configuration is one way a user could serve a workload: stock Tornado on
the GIL CPython, on the free-threaded CPython or on PyPy; N forked processes
sharing the port; tornado-stm with 1..cores threads; a Go net/http server.
Each knows how to build its server's command line for a port, or says in
one line why it is not available on this machine (never a fake number).

The tornado-stm rows come once per *variant*: a list of extra arguments
for ``tornado-stm serve`` (``STM_VARIANTS``; ``bench.run --stm-serve-args``
replaces it), so that each row can be measured once per loop mode, e.g.
``[["--loop", "shared"], ["--loop", "per-thread"]]``. The default is one
variant with no extra arguments (one event loop per thread), plus, at every
core, one row on the shared loop (``--loop shared``, the 2014 design).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from testsupport.serverproc import REPO_ROOT

#: Where `make bench` puts the Go peer server it builds.
GO_SERVER = os.path.join(REPO_ROOT, "bench", "results", "bin", "goserver")

INTERPRETERS = {
    "gil": (os.path.join(REPO_ROOT, ".venv", "bin", "python"), "CPython (GIL)"),
    "ft": (os.path.join(REPO_ROOT, ".venv-ft", "bin", "python"), "CPython free-threaded"),
    "pypy": (os.path.join(REPO_ROOT, ".venv-pypy", "bin", "python"), "PyPy"),
}

#: The workloads, in the order of the results.
WORKLOADS = ("primes", "astar", "astar2014", "hello", "mixed", "async")

#: The module each workload's stock server runs, and its factory for tornado-stm.
APP_MODULES = {"primes": "apps.primes", "hello": "apps.primes", "mixed": "apps.primes",
               "astar": "apps.astar", "astar2014": "apps.astar_large", "async": "apps.asyncmix"}

#: Workloads whose app keeps shared state: forked processes are no peer there.
SHARED_STATE = {"astar", "astar2014"}

#: Extra ``tornado-stm serve`` arguments: every tornado-stm row once per entry.
STM_VARIANTS: list[list[str]] = [[]]


@dataclass
class Config:
    """One row of the results table."""

    workload: str       # one of WORKLOADS
    key: str            # short and stable, e.g. "stm-2"
    label: str          # what the table shows
    family: str         # stock | processes | stm | go (colours of the plot)
    argv: list[str] | None = None   # with "{port}" where the port goes
    unavailable: str | None = None  # why this row has no numbers
    stm_log: bool = False           # collect a PYPYSTM log (tornado-stm rows)
    interpreter: str | None = None  # key of INTERPRETERS, for the table

    def command(self, port: int) -> list[str]:
        assert self.argv is not None
        return [a.replace("{port}", str(port)) for a in self.argv]


@lru_cache(maxsize=None)
def interpreter_problem(name: str) -> str | None:
    """None when the interpreter's venv works and has Tornado, else why not."""
    python, label = INTERPRETERS[name]
    if not os.path.exists(python):
        return f"no {label} venv ({os.path.relpath(os.path.dirname(os.path.dirname(python)), REPO_ROOT)}); `make bench` sets it up"
    done = subprocess.run([python, "-c", "import tornado"], capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0:
        return f"{label} venv has no Tornado"
    return None


@lru_cache(maxsize=None)
def interpreter_version(name: str) -> str:
    python, label = INTERPRETERS[name]
    if interpreter_problem(name):
        return label
    code = ("import sys, platform; ft = hasattr(sys, '_is_gil_enabled') and not "
            "sys._is_gil_enabled(); print(platform.python_implementation(), "
            "platform.python_version() + ('t' if ft else ''))")
    return subprocess.run([python, "-c", code], capture_output=True, text=True,
                          timeout=60).stdout.strip() or label


@lru_cache(maxsize=None)
def tornado_stm_problem() -> str | None:
    if interpreter_problem("ft"):
        return interpreter_problem("ft")
    done = subprocess.run([INTERPRETERS["ft"][0], "-c", "import tornado_stm.serve"],
                          capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    if done.returncode != 0:
        return "`tornado-stm serve` is not in this checkout yet"
    return None


def stock(workload: str, interpreter: str) -> Config:
    python, label = INTERPRETERS[interpreter]
    problem = interpreter_problem(interpreter)
    return Config(workload, f"stock-{interpreter}",
                  f"stock Tornado, {interpreter_version(interpreter)}", "stock",
                  None if problem else [python, "-m", APP_MODULES[workload], "--port", "{port}"],
                  problem, interpreter=interpreter)


def processes(workload: str, count: int) -> Config:
    label = f"Tornado, {count} processes sharing the port, {interpreter_version('gil')}"
    if workload in SHARED_STATE:
        return Config(workload, f"processes-{count}", label, "processes",
                      unavailable="not a valid peer: the map is shared state, "
                      "each process would have its own game")
    problem = interpreter_problem("gil")
    return Config(workload, f"processes-{count}", label, "processes",
                  None if problem else [INTERPRETERS["gil"][0], "-m", APP_MODULES[workload],
                                        "--port", "{port}", "--processes", str(count)],
                  problem, interpreter="gil")


def variant_slug(serve_args: Sequence[str]) -> str:
    """A short stable name for extra serve arguments: ``--loop per-thread`` -> ``loop-per-thread``."""
    return re.sub(r"[^a-z0-9]+", "-", " ".join(serve_args).lower()).strip("-")


def tornado_stm(workload: str, threads: int, *, pipelining: bool = True,
                stm_log: bool = True, serve_args: Sequence[str] = ()) -> Config:
    """tornado-stm serving ``workload``; ``serve_args`` are added to its command line."""
    slug = variant_slug(serve_args)
    key = f"stm-{threads}" + ("" if pipelining else "-nopipe") + (f"-{slug}" if slug else "")
    label = (f"tornado-stm, {threads} thread{'s' if threads > 1 else ''}, "
             f"{interpreter_version('ft')}" + ("" if pipelining else ", pipelining off")
             + (f", {' '.join(serve_args)}" if serve_args else ""))
    problem = tornado_stm_problem()
    argv = [INTERPRETERS["ft"][0], "-m", "tornado_stm", "serve",
            f"{APP_MODULES[workload]}:make_app", "--port", "{port}", "--threads", str(threads),
            # Closed-loop clients leave up to one request per user in flight
            # when they stop; do not wait long for those before writing the log.
            "--shutdown-timeout", "2",
            # As the stock Tornado peers: no line per successful request.
            "--no-access-log", *serve_args]
    if not pipelining:
        argv.append("--no-pipelining")
    return Config(workload, key, label, "stm", None if problem else argv, problem,
                  stm_log=stm_log, interpreter="ft")


def go_server(workload: str) -> Config:
    problem = None if os.path.exists(GO_SERVER) else \
        "the Go peer server is not built (needs `go`; `make bench` builds it)"
    return Config(workload, "go", "Go net/http, same algorithm", "go",
                  None if problem else [GO_SERVER, "--port", "{port}"], problem)


def all_configs(cores: int, stm_variants: Sequence[Sequence[str]] | None = None) -> list[Config]:
    """Every row, in the order of WORKLOADS; tornado-stm rows once per variant."""
    variants = STM_VARIANTS if stm_variants is None else stm_variants
    threads = range(1, cores + 1)

    def stm_rows(workload: str, counts: Sequence[int], **options) -> list[Config]:
        # --no-pipelining is a knob of the shared loop only.
        usable = [args for args in variants
                  if options.get("pipelining", True) or "per-thread" not in args]
        return [tornado_stm(workload, n, serve_args=args, **options)
                for args in usable for n in counts]

    def shared_loop(workload: str, **options) -> list[Config]:
        """The 2014 design at every core, beside the default loop per thread."""
        if variants != [[]]:
            return []                    # explicit variants say which loops to run
        return [tornado_stm(workload, cores, serve_args=("--loop", "shared"), **options)]

    primes = [stock("primes", "gil"), stock("primes", "ft"), stock("primes", "pypy"),
              processes("primes", cores)]
    primes += stm_rows("primes", threads) + shared_loop("primes")
    primes += stm_rows("primes", [cores], pipelining=False) + [go_server("primes")]
    # The game: today's light mix, and the 2014 shape (long searches on a
    # large map). Forked processes say why they are no peer.
    astar = [stock("astar", "gil"), stock("astar", "ft"), stock("astar", "pypy"),
             processes("astar", cores)] + stm_rows("astar", threads) + shared_loop("astar")
    astar2014 = [stock("astar2014", "gil"), stock("astar2014", "ft"), stock("astar2014", "pypy"),
                 processes("astar2014", cores)] + stm_rows("astar2014", threads)
    astar2014 += shared_loop("astar2014")
    # Hello world measures the loop itself: no PYPYSTM log, which costs per request.
    hello = [stock("hello", "gil"), stock("hello", "ft")]
    hello += stm_rows("hello", threads, stm_log=False) + shared_loop("hello", stm_log=False)
    hello += stm_rows("hello", [cores], pipelining=False, stm_log=False)
    # Hello world behind slow primes requests: what pipelining is for.
    mixed = [stock("mixed", "gil"), stock("mixed", "ft")]
    mixed += stm_rows("mixed", [cores], stm_log=False) + shared_loop("mixed", stm_log=False)
    mixed += stm_rows("mixed", [cores], pipelining=False, stm_log=False)
    # Coroutine handlers: await a timer, then compute (no shared state).
    coroutines = [stock("async", "gil"), stock("async", "ft"), stock("async", "pypy"),
                  processes("async", cores)] + stm_rows("async", threads) + shared_loop("async")
    return primes + astar + astar2014 + hello + mixed + coroutines
