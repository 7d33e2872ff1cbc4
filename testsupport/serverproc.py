"""Start a server as a subprocess on a free loopback port, wait for it, stop it.

Used by the benchmark (every peer server) and by the end-to-end tests. A
server is "up" when a plain HTTP GET of its probe path answers at all.
"""

from __future__ import annotations

import http.client
import logging
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from typing import Sequence

log = logging.getLogger(__name__)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    """A TCP port nobody listens on right now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerFailed(RuntimeError):
    """The server exited or never answered; the message has its output's tail."""


@dataclass
class ServerProcess:
    """A running server: its process, URL and where its output goes."""

    argv: list[str]
    port: int
    process: subprocess.Popen
    output_path: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output_head(self, lines: int = 20) -> str:
        try:
            with open(self.output_path, errors="replace") as f:
                return "".join(line for _, line in zip(range(lines), f))
        except OSError:
            return ""

    def output_tail(self, lines: int = 20) -> str:
        try:
            with open(self.output_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def errors(self, lines: int = 80) -> str:
        """The server's output from its first error on (a failed test shows why a request got 500)."""
        try:
            with open(self.output_path, errors="replace") as f:
                text = f.read().splitlines()
        except OSError:
            return ""
        first = next((i for i, line in enumerate(text)
                      if line.startswith("[E ") or line.startswith("Traceback")), None)
        return "" if first is None else "\n".join(text[first:first + lines])

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM (a graceful stop for tornado-stm serve), then SIGKILL; the exit code.

        Not SIGINT: a process started from a background shell job inherits
        SIGINT ignored, and a stock Tornado server would never see it.

        The server runs in its own process group, so forked workers (the
        multi-process peer) stop with it.
        """
        return stop_process_group(self.process, timeout, " ".join(self.argv[:4]))


def stop_process_group(process: subprocess.Popen, timeout: float, name: str = "server"
                       ) -> int | None:
    """SIGTERM to the group ``process`` leads, SIGKILL after ``timeout`` seconds; its exit code.

    The group is killed at the end in any case: forked children (a
    multi-process peer's workers) may outlive their parent by a moment.
    """
    def signal_group(sig: int) -> None:
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass

    if process.poll() is None:
        signal_group(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("%s did not stop on SIGTERM; killing it", name)
            signal_group(signal.SIGKILL)
            process.wait(10)
    signal_group(signal.SIGKILL)
    return process.returncode


def start_server(argv: Sequence[str], port: int, output_path: str, *,
                 env: dict[str, str] | None = None, probe: str = "/",
                 timeout: float = 60.0, cwd: str = REPO_ROOT) -> ServerProcess:
    """Run ``argv`` (which must listen on ``port``) and wait until it answers."""
    full_env = dict(os.environ, **(env or {}))
    with open(output_path, "wb") as output:
        process = subprocess.Popen(list(argv), cwd=cwd, env=full_env, stdout=output,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    server = ServerProcess(list(argv), port, process, output_path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerFailed(f"{' '.join(argv)} exited with {process.returncode}:\n"
                               + server.output_tail())
        if answers(port, probe):
            return server
        time.sleep(0.1)
    server.stop()
    raise ServerFailed(f"{' '.join(argv)} did not answer on port {port} within {timeout:.0f}s:\n"
                       + server.output_tail())


def answers(port: int, path: str) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        connection.getresponse().read()
        return True
    except OSError:
        return False
    finally:
        connection.close()
