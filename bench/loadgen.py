"""The load generators: siege (as the 2014 runs used) and wrk, run and parsed.

Each returns a ``Load``: requests per second, p50 and p99 latency, counts of
successes and failures. siege prints one line per request in verbose mode
(``HTTP/1.1 200 0.23 secs: ...``), so its percentiles come from those lines
(10 ms resolution); wrk prints its own latency distribution.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import asdict, dataclass

SIEGE_CONF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "siege.conf")


@dataclass
class Load:
    tool: str
    requests: int
    failures: int
    seconds: float
    requests_per_second: float
    p50_ms: float | None
    p99_ms: float | None

    def to_json(self) -> dict:
        return asdict(self)


class LoadFailed(RuntimeError):
    """The load generator did not run or printed nothing we understand."""


def percentile(sorted_values: list[float], fraction: float) -> float | None:
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def run_siege(url: str, concurrency: int, seconds: float) -> Load:
    """``siege -c N -t Ss URL`` with bench/siege.conf."""
    argv = ["siege", "-R", SIEGE_CONF, "-c", str(concurrency), "-t", f"{max(1, round(seconds))}s",
            url]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 120)
    return parse_siege(done.stdout, done.stderr)


SIEGE_LINE = re.compile(r"^HTTP/\S+\s+(\d{3})\s+([\d.]+) secs:", re.M)


def parse_siege(stdout: str, stderr: str) -> Load:
    def number(label: str) -> float:
        found = re.search(rf"^{label}:\s+([\d.]+)", stderr, re.M)
        if not found:
            raise LoadFailed(f"siege printed no {label!r}:\n{stderr[-1000:]}")
        return float(found.group(1))

    times = sorted(float(t) * 1000 for status, t in SIEGE_LINE.findall(stdout)
                   if status.startswith("2"))
    return Load("siege", requests=int(number("Successful transactions")),
                failures=int(number("Failed transactions")), seconds=number("Elapsed time"),
                requests_per_second=number("Transaction rate"),
                p50_ms=percentile(times, 0.50), p99_ms=percentile(times, 0.99))


def run_wrk(url: str, connections: int, seconds: float, threads: int = 2,
            timeout: float = 2) -> Load:
    """``wrk -t T -c N -d Ss --timeout Ts --latency URL`` (keep-alive connections).

    wrk counts an answer slower than ``timeout`` as a failure, not a latency.
    """
    argv = ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{max(1, round(seconds))}s",
            "--timeout", f"{timeout:g}s", "--latency", url]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 120)
    return parse_wrk(done.stdout + done.stderr)


WRK_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def parse_wrk(output: str) -> Load:
    def latency(label: str) -> float | None:
        found = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s|m)\b", output, re.M)
        return None if not found else float(found.group(1)) * WRK_UNITS_MS[found.group(2)]

    total = re.search(r"(\d+) requests in ([\d.]+)(ms|s|m)", output)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    if not total or not rate:
        raise LoadFailed(f"wrk printed no totals:\n{output[-1000:]}")
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), "
                              r"timeout (\d+)", output)
    failures = (int(errors.group(1)) if errors else 0) + \
        (sum(map(int, socket_errors.groups())) if socket_errors else 0)
    seconds = float(total.group(2)) * WRK_UNITS_MS[total.group(3)] / 1000
    return Load("wrk", requests=int(total.group(1)), failures=failures, seconds=seconds,
                requests_per_second=float(rate.group(1)), p50_ms=latency("50"),
                p99_ms=latency("99"))
