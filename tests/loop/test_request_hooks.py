"""A request's synchronous hooks run as one section, as stock Tornado runs them in one step.

tests/loop/hooks_app.py shares state between ``prepare`` and ``get``,
``get`` and ``on_finish``, ``get`` and ``write_error``, and
``get_current_user`` and an ``@authenticated`` ``get``. Served on two
threads under concurrent load, with and without forced aborts, no other
request may come between the hooks of one: each was a section of its own
before (semantics limit 15), and every kind of interleaving showed within
a few hundred requests. A POST's body arguments, parsed by Tornado inside
the section, are parsed once however often it ran.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlencode

import pytest
import tornado.httpclient

from tests.loop.servers import start_stm_server
from tests.loop.test_shared_state import server_state

ROUNDS = 40
CLIENTS = 8

SERVINGS = {
    "per-thread": (("--loop", "per-thread"), None),
    "shared": (("--loop", "shared"), None),
    "per-thread+aborts": (("--loop", "per-thread"),
                          {"TORNADO_STM_FAULTS": "abort=0.05,delay=0.0002,seed=5"}),
}


@pytest.fixture(params=sorted(SERVINGS))
def hooks_server(request, tmp_path):
    options, env = SERVINGS[request.param]
    server = start_stm_server("hooks_app:make_app", str(tmp_path), "--threads", "2", *options,
                              probe="/state", env=env)
    try:
        yield server
    finally:
        server.stop()


async def _load(port: int) -> list[tuple[str, str, int, dict]]:
    """Every client asks, in turn, each of the four paths; returns what each answered."""
    client = tornado.httpclient.AsyncHTTPClient(force_instance=True, max_clients=CLIENTS)
    base = f"http://127.0.0.1:{port}"

    async def one_client(number: int) -> list:
        answers = []
        for turn in range(ROUNDS):
            token = f"{number}-{turn}"
            for path, fetch in (
                    ("/count", dict(request=f"{base}/count")),
                    ("/token", dict(request=f"{base}/token?t={token}")),
                    ("/fail", dict(request=f"{base}/fail?t={token}")),
                    ("/auth", dict(request=f"{base}/auth?t={token}")),
                    ("/form", dict(request=f"{base}/form", method="POST",
                                   body=urlencode({"x": token})))):
                reply = await client.fetch(**fetch, raise_error=False, request_timeout=120,
                                           connect_timeout=60)
                body = reply.body.decode()
                if path != "/token" and reply.code < 500:
                    body = json.loads(body)
                answers.append((path, token, reply.code, body))
        return answers

    try:
        return [answer for answers in await asyncio.gather(*(one_client(n)
                                                             for n in range(CLIENTS)))
                for answer in answers]
    finally:
        client.close()


def test_no_request_comes_between_the_hooks_of_another(hooks_server) -> None:
    answers = asyncio.run(_load(hooks_server.port))
    assert len(answers) == 5 * ROUNDS * CLIENTS
    failed = [a for a in answers if a[2] >= 500]
    assert not failed, f"{failed[:3]}\nserver errors:\n{hooks_server.errors()}"
    between_prepare_and_get = [a for a in answers if a[0] == "/count" and a[3]["mine"] != a[3]["now"]]
    assert not between_prepare_and_get, between_prepare_and_get[:3]
    between_get_and_write_error = [a for a in answers if a[0] == "/fail"
                                   and (a[2], a[3]) != (400, {"token": a[1]})]
    assert not between_get_and_write_error, between_get_and_write_error[:3]
    between_current_user_and_get = [a for a in answers if a[0] == "/auth"
                                    and (a[2], a[3]) != (200, {"user": a[1], "slot": a[1]})]
    assert not between_current_user_and_get, between_current_user_and_get[:3]
    parsed_twice = [a for a in answers if a[0] == "/form"
                    and (a[2], a[3]) != (200, {"x": [a[1]], "all": [a[1]]})]
    assert not parsed_twice, parsed_twice[:3]
    state = server_state(hooks_server.port)
    assert state["served"] == ROUNDS * CLIENTS
    assert state["interleaved"] == 0, "another request came between a get() and its on_finish()"
    assert state["counter"] == 2 * ROUNDS * CLIENTS


def test_a_response_the_connection_refuses_at_commit_is_handled_as_tornado_does(tmp_path) -> None:
    """``finish`` sends 2 of 42 promised bytes: the held connection raises only
    when it is replayed after the commit, outside Tornado's ``_execute``. As
    in stock Tornado, the error is logged once as the request's, the client
    sees a broken response, and the server goes on serving."""
    server = start_stm_server("hooks_app:make_app", str(tmp_path), "--threads", "2",
                              "--loop", "per-thread", probe="/state")
    try:
        client = tornado.httpclient.HTTPClient()
        try:
            for _ in range(3):
                with pytest.raises(tornado.httpclient.HTTPClientError):
                    client.fetch(f"{server.url}/badlength")
        finally:
            client.close()
        assert server_state(server.port)["counter"] == 0
    finally:
        server.stop()
    output = server.output_tail(400)
    assert output.count("Tried to write 40 bytes less than Content-Length") == 3, output
    assert output.count("Uncaught exception GET /badlength") == 3, output
    assert "Exception in callback" not in output, output
