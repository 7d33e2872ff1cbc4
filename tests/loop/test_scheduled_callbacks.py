"""Work an application puts on the event loop appears serial, and costs little.

A handler may hand the loop a library callable: ``add_callback(EVENTS.append,
x)``, ``call_later(1, CACHE.clear)``, ``future.add_done_callback(EVENTS.append)``.
The loop used to run it in place, outside every section, so a section that
read EVENTS and wrote it back committed over the append (about one in ten
lost on 4 threads). Such a callback now runs as a section of its own
(``tornado_stm.loop.scheduling``). And a sync handler's ``add_callback``
no longer makes its section inevitable: it is queued to the section's end,
where a serial run would have the callback anyway, in order with what the
section schedules after it turns inevitable, and raising at once when a
serial run would (red-team round 42); in a coroutine step the scheduling
call no longer walks (and holds) the whole event loop.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Iterator

import pytest

from tests.loop import scheduling_app  # noqa: F401  (served from its file)
from tests.loop.servers import get_json, post_all, start_stm_server
from tests.loop.test_held_response import (FORCED_ABORTS,
                                           assert_aborted_and_only_the_factory_inevitable)
from tests.loop.test_shared_state import server_state

ROUNDS = 40
SCHEDULING = ["/sync/add_callback", "/sync/call_later", "/sync/call_soon", "/async/add_callback",
              "/async/call_soon", "/async/call_later", "/async/done"]

SERVINGS = {
    "4 threads": ({}, ("--threads", "4")),
    "2 threads, faults": ({"TORNADO_STM_FAULTS": "abort=0.02,delay=0.0002,seed=5"},
                          ("--threads", "2")),
    "shared loop": ({}, ("--threads", "2", "--loop", "shared")),
}


def _serve(name: str, tmp_path) -> Iterator:
    env, options = SERVINGS[name]
    served = start_stm_server("scheduling_app:make_app", str(tmp_path), *options,
                              probe="/ping", env=env)
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture(params=sorted(SERVINGS))
def server(request, tmp_path):
    yield from _serve(request.param, tmp_path)


@pytest.fixture(params=sorted(name for name in SERVINGS if name != "shared loop"))
def per_thread_server(request, tmp_path):
    """The per-thread loops only: the shared loop runs a batch's callbacks on
    several threads, and they may finish in another order (docs/compatibility.md)."""
    yield from _serve(request.param, tmp_path)


def _settled_state(port: int, expected_events: int) -> dict:
    """The app's state once the timers scheduled have fired (or 10 s have passed)."""
    deadline = time.monotonic() + 10
    state = server_state(port)
    while state["events"] < expected_events and time.monotonic() < deadline:
        time.sleep(0.1)
        state = server_state(port)
    return state


def test_library_callbacks_on_the_loop_lose_no_update(server) -> None:
    paths = [path for _ in range(ROUNDS) for pair in zip(SCHEDULING, ["/rewrite"] * 7)
             for path in pair]
    responses = post_all(server.port, paths)
    assert Counter(r.code for r in responses) == {200: len(paths)}, server.errors()
    expected = ROUNDS * len(SCHEDULING)
    state = _settled_state(server.port, expected)
    time.sleep(0.2)                 # one more would show as too many
    assert server_state(server.port)["events"] == state["events"] == expected


def test_a_callback_queued_by_a_section_runs_after_it_and_keeps_it_optimistic(tmp_path) -> None:
    log_path = str(tmp_path / "count.pypystm")
    server = start_stm_server("scheduling_app:make_app", str(tmp_path), "--threads", "2",
                              "--log", log_path, probe="/ping", env=FORCED_ABORTS)
    try:
        responses = post_all(server.port, ["/count"] * 300)
        assert Counter(r.code for r in responses) == {200: 300}, server.errors()
        deadline = time.monotonic() + 10
        while server_state(server.port)["callbacks"] < 300 and time.monotonic() < deadline:
            time.sleep(0.1)
        state = server_state(server.port)
    finally:
        assert server.stop() == 0, server.output_tail()
    # One callback per committed section (none for an aborted attempt), each
    # after the write its section made once it had scheduled it.
    assert state == {"events": 0, "sections": 300, "callbacks": 300, "late": 0}
    assert_aborted_and_only_the_factory_inevitable(log_path)


def test_deferred_scheduling_keeps_the_order_undo_and_errors_of_a_serial_run(
        per_thread_server) -> None:
    server = per_thread_server
    paths = [f"/order/{n}" for n in range(100)] + ["/undo"] * 100 + ["/not-a-future"] * 50
    responses = post_all(server.port, paths)
    assert Counter(r.code for r in responses) == {200: len(paths)}, server.errors()
    # add_future's error is raised in the handler, where a serial run raises it
    assert Counter(r.body for r in responses if r.request.url.endswith("future")) \
        == {b"caught": 50}
    seen = get_json(server.port, "/orders")
    # add_callback then call_soon: "a" runs first, for every request
    position = {tuple(mark): index for index, mark in enumerate(seen["order"])}
    assert len(position) == 200
    assert all(position[("a", str(n))] < position[("b", str(n))] for n in range(100))
    # add_done_callback then remove_done_callback: the callback is found
    assert seen["removed"] == [1] * 100
    assert server_state(server.port)["events"] == 0
