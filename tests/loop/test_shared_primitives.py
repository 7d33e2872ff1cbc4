"""Locks and conditions of an application shared by every loop of a per-thread server.

An application written for one loop keeps its ``asyncio.Lock`` or
``tornado.locks.Condition`` in a module global; with one loop per thread
its users are on different loops. asyncio refused a second loop ("is bound
to a different event loop": a 500), and a future resolved from another
loop's thread did not wake its own loop (a waiter slept until its next
event or its timeout). Real server process, real HTTP clients.

Red-team round 12 found three more shapes broken on the per-thread loops
(docs/semantics.md, limit 16, before it was lifted): asyncio's code that
runs when a waiter of an ``asyncio.Condition`` or ``Event`` wakes up ran
without W while other loops changed the same primitive (two holders of
the condition at once, "deque mutated during iteration" 500s), and a
``Future`` of one loop awaited by a task of another was refused ("attached
to a different loop" 500s).
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
PAIRS = 300          # consumers and producers of the asyncio.Condition
PARKED = 300         # waiters on the asyncio.Event
LOOKUPS = 400        # single-flight cache requests, over KEYS keys
KEYS = 8
CLIENTS = 24
TIMED_PAIRS = 300    # consumers with timeouts and producers of the tornado Condition
PERMIT_USES = 1500   # acquires with a timeout of the tornado Semaphore


def _plain_request(port: int, method: str, path: str, timeout: float = 60) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=b"" if method == "POST" else None)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _request(port: int, method: str, path: str, timeout: float = 20) -> tuple[int, dict]:
    status, body = _plain_request(port, method, path, timeout)
    return status, json.loads(body or b"{}")


def _serving(tmp_path, serving: str, threads: int = 2):
    """The waiting app on ``threads`` threads, served as ``serving`` says: a
    loop (per-thread or shared), with "+aborts" for forced aborts."""
    loop, _, aborts = serving.partition("+")
    faults = {"TORNADO_STM_FAULTS": "abort=0.05,delay=0.0002,seed=11"} if aborts else None
    started = start_stm_server("waiting_app:make_app", str(tmp_path), "--threads", str(threads),
                               "--loop", loop, probe="/counter", env=faults)
    yield started
    assert started.stop() == 0, started.output_tail()


@pytest.fixture(params=["per-thread", "shared"])
def server(request, tmp_path):
    yield from _serving(tmp_path, request.param)


@pytest.fixture(params=["per-thread", "per-thread+aborts", "shared"])
def busy_server(request, tmp_path):
    yield from _serving(tmp_path, request.param)


@pytest.fixture(params=["per-thread", "per-thread+aborts"])
def oversubscribed_server(request, tmp_path):
    """Four loops on two cores: a step is preempted half-way, often."""
    yield from _serving(tmp_path, request.param, threads=4)


def _post_all(port: int, paths: list[str], clients: int = CLIENTS) -> list[int]:
    with ThreadPoolExecutor(clients) as pool:
        return list(pool.map(lambda path: _plain_request(port, "POST", path)[0], paths))


def test_a_tornado_condition_notify_wakes_the_waiter_it_finds_despite_timeouts(
        oversubscribed_server) -> None:
    """A waiter's timeout fires on its own loop; a notify(1) from another
    loop's step must not see it half-settled (round 41: the timeout ran
    without W, and a notify found a waiter that then timed out)."""
    paths = [f"/tconsume?seed={i}" if i % 2 == 0 else "/tproduce" for i in range(2 * TIMED_PAIRS)]
    codes = _post_all(oversubscribed_server.port, paths)
    assert codes == [200] * len(paths), oversubscribed_server.errors()
    state = _request(oversubscribed_server.port, "GET", "/state")[1]
    assert state["unwoken"] == 0 and state["notified"] == state["live_notifies"], state
    assert state["timed_consumed"] == TIMED_PAIRS and state["timed_items"] == 0, state


def test_a_tornado_semaphore_keeps_its_permits_despite_timeouts(oversubscribed_server) -> None:
    """An acquire's timeout and a release on another loop (round 41: release
    raised InvalidStateError on a waiter timing out, and a permit was lost;
    a narrow race: the round's own program showed it in 3 of 7 runs, this
    test did not show it in 6 runs of the old code: it guards the invariant)."""
    codes = _post_all(oversubscribed_server.port, [f"/permit?seed={i}" for i in range(PERMIT_USES)])
    assert codes == [200] * PERMIT_USES, oversubscribed_server.errors()
    state = _request(oversubscribed_server.port, "GET", "/state")[1]
    assert state["permits"] == 2 and state["permit_holders"] == 0, state
    assert state["most_permit_holders"] <= 2, state
    assert state["permits_got"] + state["permit_timeouts"] == PERMIT_USES, state


def test_an_asyncio_condition_has_one_holder_at_a_time(busy_server) -> None:
    calls = [("POST", "/consume" if i % 2 == 0 else "/produce") for i in range(2 * PAIRS)]
    with ThreadPoolExecutor(CLIENTS) as pool:
        codes = list(pool.map(lambda call: _plain_request(busy_server.port, *call)[0], calls))
    assert codes == [200] * len(calls), busy_server.errors()
    state = _request(busy_server.port, "GET", "/state")[1]
    assert (state["violations"], state["negative"], state["holders"]) == (0, 0, 0), state
    assert state["consumed"] == state["produced"] == PAIRS and state["items"] == 0, state


def test_waiters_on_an_asyncio_event_wake_on_a_pulse(busy_server) -> None:
    parked_done = threading.Event()

    def pulse_until_all_woken() -> list[int]:
        codes = []
        while not parked_done.is_set():
            codes.append(_plain_request(busy_server.port, "POST", "/pulse")[0])
            time.sleep(0.002)
        return codes

    with ThreadPoolExecutor(CLIENTS + 2) as pool:
        pulsers = [pool.submit(pulse_until_all_woken) for _ in range(2)]
        woken = list(pool.map(lambda _: _plain_request(busy_server.port, "GET", "/parked"),
                              range(PARKED)))
        parked_done.set()
        pulse_codes = [code for pulser in pulsers for code in pulser.result()]
    assert woken == [(200, b"woken")] * PARKED, busy_server.errors()
    assert set(pulse_codes) == {200}, busy_server.errors()
    state = _request(busy_server.port, "GET", "/state")[1]
    assert state["woken"] == PARKED and state["pulses"] == len(pulse_codes), state


def test_requests_await_the_future_of_a_request_on_another_loop(busy_server) -> None:
    keys = [f"k{i % KEYS}" for i in range(LOOKUPS)]
    with ThreadPoolExecutor(CLIENTS) as pool:
        answers = list(pool.map(
            lambda key: _plain_request(busy_server.port, "GET", f"/cached?key={key}"), keys))
    assert answers == [(200, key.upper().encode()) for key in keys], busy_server.errors()
    # Single flight: each key computed once, by the first request for it.
    assert _request(busy_server.port, "GET", "/state")[1]["computed"] == KEYS


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
