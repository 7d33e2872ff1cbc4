"""Run ``tornado-stm serve`` as a real process and learn where it listens from its banner.

The server prints one ``listening on URL`` line per socket once it is
bound; :func:`start` waits (bounded) for them, so the tests can use
``--port 0``, Unix sockets and TLS without choosing a port first. Every
process is stopped by the test that started it (``Served.stop``: SIGTERM,
then SIGKILL of its own process group).
"""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from testsupport.serverproc import stop_process_group

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
START_TIMEOUT = 60.0

_LISTENING = re.compile(r"^  listening on (\S+)", re.MULTILINE)


def env(**extra: str) -> dict[str, str]:
    """The environment of a server: tornado_stm importable from the work tree, no TORNADO_STM_*."""
    base = {key: value for key, value in os.environ.items()
            if not key.startswith("TORNADO_STM_") or key in ("TORNADO_STM_PYTHON",
                                                              "TORNADO_STM_PURE")}
    paths = [ROOT, extra.pop("PYTHONPATH", ""), os.environ.get("PYTHONPATH", "")]
    base["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    base.update(extra)
    return base


def listening_urls(output: str) -> list[str]:
    """The URLs of the ``listening on`` lines of serve's output (each banner's)."""
    return _LISTENING.findall(output)


def serve_argv(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "tornado_stm", "serve", *arguments]


def run_serve(*arguments: str, cwd: str = HERE, timeout: float = 120,
              environment: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess:
    """A serve command expected to end by itself (bad input, --help, an app's --help)."""
    return subprocess.run(serve_argv(*arguments), cwd=cwd, env=environment or env(),
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@dataclass
class Served:
    process: subprocess.Popen
    output_path: str
    urls: list[str] = field(default_factory=list)

    def output(self) -> str:
        with open(self.output_path, errors="replace") as stream:
            return stream.read()

    @property
    def port(self) -> int:
        return int(self.urls[0].rsplit(":", 1)[1].rstrip("/"))

    def stop(self, timeout: float = 30.0) -> Optional[int]:
        return stop_process_group(self.process, timeout, "tornado-stm serve")


def start(output_path: str, *arguments: str, cwd: str = HERE, sockets: int = 1,
          environment: Optional[dict[str, str]] = None,
          pass_fds: tuple[int, ...] = ()) -> Served:
    """Start serve and wait until its banner names ``sockets`` listening URLs."""
    with open(output_path, "wb") as output:
        process = subprocess.Popen(serve_argv(*arguments), cwd=cwd, env=environment or env(),
                                   stdout=output, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True,
                                   pass_fds=pass_fds)
    served = Served(process, output_path)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        served.urls = listening_urls(served.output())
        if len(served.urls) >= sockets:
            return served
        if process.poll() is not None:
            raise AssertionError(f"serve exited with {process.returncode}:\n{served.output()}")
        time.sleep(0.05)
    served.stop()
    raise AssertionError(f"serve printed no banner within {START_TIMEOUT:.0f}s:\n"
                         + served.output())


def get(url: str, path: str = "/", headers: Optional[dict[str, str]] = None,
        timeout: float = 60) -> tuple[int, bytes]:
    """GET over TCP (``http://host:port/``) or a Unix socket (``unix:/path``)."""
    if url.startswith("unix:"):
        connection: http.client.HTTPConnection = _UnixConnection(url[len("unix:"):], timeout)
    else:
        host, port = url.split("//", 1)[1].rstrip("/").rsplit(":", 1)
        connection = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=timeout)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def wait_for(predicate, what: str, timeout: float = 60.0, interval: float = 0.1):
    """Poll until ``predicate()`` is truthy (bounded); its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(interval)


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False
