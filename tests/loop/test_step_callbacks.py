"""Application code called back from C inside a coroutine step is part of the step.

``sorted(rows, key=lambda ...)`` or ``f"{obj}"`` in an ``async def`` handler
calls application code from C. That call once started an atomic section
of its own, which gave the step's W up while it ran: other loops' steps
ran in the middle of the step, and a read-modify-write around it lost
updates (about a fifth of them on 4 threads), an in-place sort raised
"list modified during sort" (red-team round 40). The callback now runs
as part of the step (``section._steps_running``). Served on 4 threads
(more than the cores, so a step is preempted half-way) and with faults.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.loop import callback_step_app
from tests.loop.servers import post_all, start_stm_server
from tests.loop.test_shared_state import server_state

REQUESTS = 600

SERVINGS = {
    "4 threads": ({}, "4"),
    "2 threads, faults": ({"TORNADO_STM_FAULTS": "abort=0.02,delay=0.00005,seed=5"}, "2"),
}


@pytest.fixture(params=sorted(SERVINGS))
def server(request, tmp_path):
    env, threads = SERVINGS[request.param]
    served = start_stm_server("callback_step_app:make_app", str(tmp_path), "--threads", threads,
                              probe="/ping", env=env)
    try:
        yield served
    finally:
        served.stop()


def test_no_update_is_lost_around_a_callback_from_c(server) -> None:
    paths = ["/bump-key", "/bump-str"] * (REQUESTS // 2)
    responses = post_all(server.port, paths)
    assert Counter(r.code for r in responses) == {200: REQUESTS}, server.errors()
    assert server_state(server.port)["n"] == REQUESTS


def test_an_in_place_sort_with_a_key_sees_its_list_alone(server) -> None:
    values = list(range(REQUESTS // 2))
    responses = post_all(server.port, [f"/sort?value={v}" for v in values])
    assert Counter(r.code for r in responses) == {200: len(values)}, server.errors()
    board = server_state(server.port)["board"]
    start = [5, 3, 8, 1]
    assert board == sorted(start + values, reverse=True)
    # Each answer saw the list with its own value added, one more each time.
    lengths = sorted(json.loads(r.body)["length"] for r in responses)
    assert lengths == list(range(len(start) + 1, len(start) + len(values) + 1))
