"""WebSocket handlers on several threads: every message answered, each count given once.

``write_message`` is output to the handler's own peer: the section that
calls it turns inevitable (it cannot be taken back), but it changes no
application state. It used to be treated as unknown code, whose call holds
everything it reaches: a walk over the handler's connection, loop and
application that stalled every other section, so that echoes took seconds
and, on the shared loop, plain HTTP requests went unanswered. Real clients,
a real server; the timeouts only catch such a stall.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest
import tornado.websocket

from tests.loop.servers import start_stm_server

CLIENTS = 8
MESSAGES = 50
#: Far above what an echo takes (milliseconds): only a stalled server misses it.
ANSWER_TIMEOUT = 20.0


async def _talk(port: int) -> list[list[str]]:
    url = f"ws://127.0.0.1:{port}/echo"
    sockets = [await asyncio.wait_for(tornado.websocket.websocket_connect(url), ANSWER_TIMEOUT)
               for _ in range(CLIENTS)]

    async def echo(socket: tornado.websocket.WebSocketClientConnection, who: int) -> list[str]:
        answers = []
        for i in range(MESSAGES):
            await socket.write_message(f"{who}.{i}")
            answers.append(await asyncio.wait_for(socket.read_message(), ANSWER_TIMEOUT))
        socket.close()
        return answers

    return await asyncio.gather(*(echo(socket, who) for who, socket in enumerate(sockets)))


@pytest.mark.parametrize("options", [("--loop", "per-thread"), ("--loop", "shared")])
def test_every_message_is_echoed_with_a_count_of_its_own(tmp_path, options) -> None:
    server = start_stm_server("websocket_app:make_app", str(tmp_path), "--threads", "2",
                              *options, probe="/state")
    try:
        answers = asyncio.run(_talk(server.port))
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/state", timeout=30) as got:
            state = json.loads(got.read())
    finally:
        assert server.stop() == 0, server.output_tail()
    for who, mine in enumerate(answers):
        assert [answer.split(":", 1)[1] for answer in mine] == \
            [f"{who}.{i}" for i in range(MESSAGES)]
    counts = sorted(int(answer.split(":", 1)[0]) for mine in answers for answer in mine)
    assert counts == list(range(1, CLIENTS * MESSAGES + 1))       # each count given once
    assert state == {"messages": CLIENTS * MESSAGES}
