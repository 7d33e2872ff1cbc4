"""Servers for the apps' end-to-end tests: real subprocesses on free loopback ports.

``demo_server`` and the others are parametrised over the ways to serve an
app: stock Tornado (``python -m apps.demo``) and ``tornado-stm serve``.
"""

from __future__ import annotations

import sys
from typing import Iterator, Sequence

import pytest

from testsupport.serverproc import ServerProcess, free_port, start_server


def server_command(kind: str, target: str, port: int,
                   instrument: Sequence[str] = ()) -> list[str]:
    """How to serve ``target`` (``module:factory``) on ``port`` with stock Tornado or tornado-stm.

    ``instrument``: module patterns for tornado-stm when the app's handlers
    are not in the target's own package (a test's factory around ``apps``).
    """
    if kind == "stock":
        module = target.split(":")[0]
        return [sys.executable, "-m", module, "--port", str(port)]
    patterns = [arg for pattern in instrument for arg in ("--instrument", pattern)]
    return [sys.executable, "-m", "tornado_stm", "serve", target, "--port", str(port),
            "--threads", "2", *patterns]


SERVER_KINDS = ["stock", "tornado-stm"]


def serve(kind: str, target: str, log_dir, instrument: Sequence[str] = ()) -> ServerProcess:
    port = free_port()
    return start_server(server_command(kind, target, port, instrument), port,
                        str(log_dir / f"{kind}-server.log"))


@pytest.fixture(scope="module", params=SERVER_KINDS)
def demo_server(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[ServerProcess]:
    """The demo app (hello, primes, fib, the game under /astar) on a live server.

    One server per test module: the tests tolerate each other's players.
    """
    server = serve(request.param, "apps.demo:make_app", tmp_path_factory.mktemp("server"))
    yield server
    server.stop()


@pytest.fixture(scope="module", params=SERVER_KINDS)
def short_idle_server(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[ServerProcess]:
    """The game alone, with room for 3 players who expire after 4 idle seconds."""
    server = serve(request.param, "tests.apps.astar_short_idle:make_app",
                   tmp_path_factory.mktemp("server"),
                   instrument=["apps", "apps.*", "tests.apps.astar_short_idle"])
    yield server
    server.stop()


@pytest.fixture(scope="module", params=SERVER_KINDS)
def large_astar_server(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[ServerProcess]:
    """The game alone on its large map (apps.astar_large), for the search-heavy mix."""
    server = serve(request.param, "apps.astar_large:make_app", tmp_path_factory.mktemp("server"))
    yield server
    server.stop()
