"""Locks and conditions of an application shared by every loop of a per-thread server.

An application written for one loop keeps its ``asyncio.Lock`` or
``tornado.locks.Condition`` in a module global; with one loop per thread
its users are on different loops. asyncio refused a second loop ("is bound
to a different event loop": a 500), and a future resolved from another
loop's thread did not wake its own loop (a waiter slept until its next
event or its timeout). Real server process, real HTTP clients.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.loop.servers import start_stm_server

WAITERS = 10
INCREMENTS = 60


def _request(port: int, method: str, path: str, timeout: float = 20) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=b"" if method == "POST" else None)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


@pytest.fixture(params=["per-thread", "shared"])
def server(request, tmp_path):
    started = start_stm_server("waiting_app:make_app", str(tmp_path), "--threads", "2",
                               "--loop", request.param, probe="/counter")
    yield started
    assert started.stop() == 0, started.output_tail()


def test_a_condition_wakes_waiters_on_every_loop(server) -> None:
    with ThreadPoolExecutor(WAITERS) as pool:
        started = time.monotonic()
        waiting = [pool.submit(_request, server.port, "GET", "/wait") for _ in range(WAITERS)]
        time.sleep(1.0)                  # the waiters are parked on both loops
        assert _request(server.port, "POST", "/post?text=hello")[0] == 200
        answers = [future.result() for future in waiting]
        woken_after = time.monotonic() - started
    assert answers == [(200, {"messages": ["hello"]})] * WAITERS
    assert woken_after < 10, f"waiters slept {woken_after:.1f} s after the notify"


def test_an_asyncio_lock_serializes_holders_on_every_loop(server) -> None:
    codes: list[int] = []
    lock = threading.Lock()

    def client() -> None:
        for _ in range(INCREMENTS // 6):
            code = _request(server.port, "POST", "/counter")[0]
            with lock:
                codes.append(code)

    threads = [threading.Thread(target=client) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert codes == [200] * INCREMENTS
    assert _request(server.port, "GET", "/counter") == (200, {"n": INCREMENTS})
