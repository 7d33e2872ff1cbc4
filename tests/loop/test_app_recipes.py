"""Handler code that reaches into Tornado's objects keeps its stock meaning on every loop.

tests/loop/recipes_app.py holds three habits of Tornado applications that
broke on the per-thread loops (red-team round 12): arguments merged into
``request.arguments`` by ``prepare()`` and read back with
``get_argument()``, a ``log_function`` keeping metrics, and timers
scheduled on the loop the factory ran on; round 13 the CORS recipe
(``set_default_headers()`` calling ``set_header()``). Each is served on two loops,
under concurrent clients, with and without forced aborts.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import tornado.httpclient

from tests.loop.servers import start_stm_server
from tests.loop.test_shared_state import server_state

REQUESTS = 120
CLIENTS = 8

SERVINGS = {
    "per-thread": None,
    "per-thread+aborts": {"TORNADO_STM_FAULTS": "abort=0.05,delay=0.0002,seed=7"},
}


@pytest.fixture(params=sorted(SERVINGS))
def recipes_server(request, tmp_path):
    server = start_stm_server("recipes_app:make_app", str(tmp_path), "--threads", "2",
                              "--loop", "per-thread", probe="/state",
                              env=SERVINGS[request.param])
    try:
        yield server
    finally:
        server.stop()


async def _fetch_all(port: int, fetches: list[dict]) -> list[tuple[int, bytes]]:
    """Every fetch, CLIENTS at a time, on keep-alive connections; (code, body) each."""
    return [(code, body) for code, _, body in await _fetch_all_with_headers(port, fetches)]


def test_get_argument_sees_what_prepare_merged_into_the_request(recipes_server) -> None:
    fetches = [dict(path="/greet", method="POST", body=json.dumps({"name": f"guest{i}"}),
                    headers={"Content-Type": "application/json"}) for i in range(REQUESTS)]
    replies = asyncio.run(_fetch_all(recipes_server.port, fetches))
    assert replies == [(200, f"hello guest{i}".encode()) for i in range(REQUESTS)], \
        (replies[:3], recipes_server.errors())


def test_log_function_runs_inside_finish(recipes_server) -> None:
    replies = asyncio.run(_fetch_all(recipes_server.port,
                                     [dict(path="/work") for _ in range(REQUESTS)]))
    assert {code for code, _ in replies} == {200}, recipes_server.errors()
    # Each request saw every request served before it logged too.
    seen = [json.loads(body) for _, body in replies]
    assert all(answer["logged"] == answer["served"] - 1 for answer in seen), \
        [answer for answer in seen if answer["logged"] != answer["served"] - 1][:5]
    metrics = server_state(recipes_server.port)["metrics"]
    assert metrics == {"served": REQUESTS, "logged": REQUESTS, "mismatch": 0}, metrics


def test_timers_scheduled_on_the_factory_loop_fire(recipes_server) -> None:
    jobs = [f"job{i}" for i in range(40)]
    replies = asyncio.run(_fetch_all(recipes_server.port, [
        dict(path=f"/schedule?job={job}", method="POST", body="") for job in jobs]))
    assert {code for code, _ in replies} == {200}, recipes_server.errors()
    # Each timer is 20 ms long. Nothing happens for a while: a timer the
    # loop does not know of would fire only at the next request.
    time.sleep(1.5)
    state = server_state(recipes_server.port)["jobs"]
    late = {job: state[job].get("late") for job in jobs}
    assert all(seconds is not None and seconds < 1.0 for seconds in late.values()), late


def test_set_default_headers_may_set_headers(recipes_server) -> None:
    fetches = [dict(path="/cors", method="OPTIONS" if i % 2 else "GET") for i in range(REQUESTS)]
    client_replies = asyncio.run(_fetch_all_with_headers(recipes_server.port, fetches))
    assert [code for code, _, _ in client_replies] == \
        [204 if i % 2 else 200 for i in range(REQUESTS)], recipes_server.errors()
    assert all(headers.get("Access-Control-Allow-Origin") == "*"
               and headers.get("Access-Control-Allow-Methods") == "GET, OPTIONS"
               for _, headers, _ in client_replies)
    served = sorted(json.loads(body)["served"] for code, _, body in client_replies if code == 200)
    assert served == list(range(1, REQUESTS // 2 + 1)), served


async def _fetch_all_with_headers(port: int, fetches: list[dict]) -> list[tuple[int, dict, bytes]]:
    """Every fetch, CLIENTS at a time, on keep-alive connections; (code, headers, body) each."""
    client = tornado.httpclient.AsyncHTTPClient(force_instance=True, max_clients=CLIENTS)
    try:
        replies = await asyncio.gather(*(
            client.fetch(f"http://127.0.0.1:{port}{fetch.pop('path')}", raise_error=False,
                         request_timeout=60, allow_nonstandard_methods=True, **fetch)
            for fetch in fetches))
        return [(reply.code, dict(reply.headers), reply.body) for reply in replies]
    finally:
        client.close()
