"""The game's pushes and presence over a real server and a real WebSocket client.

``/api/updates`` pushes the state when it changes; a page's player leaves
when its socket closes or its ``pagehide`` beacon arrives, and idle players
expire (here after 4 s, on a server with room for 3 players).
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from typing import Any, Callable

from tornado.websocket import WebSocketClientConnection, websocket_connect

from tests.apps.astar_short_idle import IDLE_TIMEOUT, MAX_PLAYERS
from tests.apps.http_helpers import fetch

#: Bound on every wait for the server: generous, a loaded machine is slow.
WAIT = 30.0


def ws_url(http_url: str) -> str:
    return "ws" + http_url[len("http"):]


async def next_push(socket: WebSocketClientConnection,
                    wanted: Callable[[dict], Any] = lambda state: True) -> dict:
    """The next pushed state for which ``wanted`` is true (earlier ones skipped)."""
    deadline = time.monotonic() + WAIT
    while True:
        raw = await asyncio.wait_for(socket.read_message(), deadline - time.monotonic())
        assert raw is not None, "the server closed the socket"
        state = json.loads(raw)
        if wanted(state):
            return state


def player_in(state: dict, player_id: int) -> dict | None:
    return next((p for p in state["players"] if p["id"] == player_id), None)


def wait_until(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"after {WAIT:.0f}s still not: {what}")


def test_the_socket_sends_the_state_then_pushes_each_change(demo_server) -> None:
    game = demo_server.url + "/astar"

    async def scenario() -> None:
        socket = await websocket_connect(ws_url(game) + "/api/updates")
        try:
            first = await next_push(socket)
            state = fetch(game + "/api/state")[2]
            assert first["grid"] == state["grid"]
            assert first["walls_version"] == state["walls_version"]

            me = fetch(game + "/api/join", {"name": "pushed"})[2]["player"]
            joined = await next_push(socket, lambda s: player_in(s, me["id"]))
            assert "grid" not in joined  # the walls did not change: no map again

            target = next((x, y) for x, y in ((me["x"] + 1, me["y"]), (me["x"] - 1, me["y"]),
                                              (me["x"], me["y"] + 1), (me["x"], me["y"] - 1))
                          if 0 <= x < state["width"] and 0 <= y < state["height"]
                          and not state["grid"][y][x]
                          and not any((p["x"], p["y"]) == (x, y) for p in joined["players"]))
            assert fetch(game + "/api/move", {"player": me["id"], "x": target[0],
                                              "y": target[1]})[0] == 200
            moved = await next_push(socket, lambda s: (player_in(s, me["id"]) or {})
                                    .get("moves") == 1)
            assert (player_in(moved, me["id"])["x"], player_in(moved, me["id"])["y"]) == target

            status, _, built = fetch(game + "/api/wall", {"player": me["id"], "x": me["x"],
                                                          "y": me["y"], "wall": True})
            assert status == 200
            walled = await next_push(socket, lambda s: s["walls_version"]
                                     >= built["walls_version"])
            assert walled["grid"][me["y"]][me["x"]] == 1  # a new map comes with its version
            fetch(game + "/api/wall", {"player": me["id"], "x": me["x"], "y": me["y"],
                                       "wall": False})
            assert fetch(game + "/api/leave", {"player": me["id"]})[0] == 200
            await next_push(socket, lambda s: player_in(s, me["id"]) is None)
        finally:
            socket.close()

    asyncio.run(scenario())


def test_closing_the_socket_makes_its_player_leave(demo_server) -> None:
    game = demo_server.url + "/astar"
    page = fetch(game + "/api/join", {"name": "page"})[2]["player"]
    other = fetch(game + "/api/join", {"name": "other"})[2]["player"]

    async def open_and_close() -> None:
        socket = await websocket_connect(ws_url(game) + "/api/updates")
        await next_push(socket)
        for junk in ("not json", "[1]", '{"player": true}', '{"player": 999999}'):
            await socket.write_message(junk)  # ignored, and no player is claimed
        # One connection's messages are handled in order, the close last.
        await socket.write_message(json.dumps({"player": page["id"]}))
        socket.close()

    asyncio.run(open_and_close())
    ids = lambda: {p["id"] for p in fetch(game + "/api/state")[2]["players"]}  # noqa: E731
    wait_until(lambda: page["id"] not in ids(), "the page's player left")
    assert other["id"] in ids()
    fetch(game + "/api/leave", {"player": other["id"]})


def test_the_pagehide_beacon_leaves_with_a_text_body(demo_server) -> None:
    # navigator.sendBeacon sends a string as text/plain;charset=UTF-8.
    game = demo_server.url + "/astar"
    me = fetch(game + "/api/join", {"name": "beacon"})[2]["player"]
    request = urllib.request.Request(game + "/api/leave",
                                     data=json.dumps({"player": me["id"]}).encode(),
                                     headers={"Content-Type": "text/plain;charset=UTF-8"})
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        assert response.status == 200 and json.load(response) == {"left": True}
    assert player_in(fetch(game + "/api/state")[2], me["id"]) is None


def test_idle_players_expire_and_the_full_game_takes_players_again(short_idle_server) -> None:
    url = short_idle_server.url
    players = [fetch(url + "/api/join", {"name": f"p{i}"})[2]["player"]
               for i in range(MAX_PLAYERS)]
    status, reason, _ = fetch(url + "/api/join", {"name": "late"})
    assert (status, reason) == (409, f"the game is full ({MAX_PLAYERS} players)")
    watching, acting, idle = players

    async def keep_two_alive() -> dict:
        # One player's page says it is there on its socket; another acts;
        # the third does nothing, and must make room after IDLE_TIMEOUT.
        socket = await websocket_connect(ws_url(url) + "/api/updates")
        try:
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                await socket.write_message(json.dumps({"player": watching["id"]}))
                fetch(url + "/api/path", {"player": acting["id"], "to": [0, 0]})
                status, _, answer = fetch(url + "/api/join", {"name": "late"})
                if status == 200:
                    names = {p["name"] for p in fetch(url + "/api/state")[2]["players"]}
                    assert names == {"p0", "p1", "late"}
                    return answer["player"]
                assert status == 409
                await asyncio.sleep(IDLE_TIMEOUT / 16)
            raise AssertionError("the idle player never expired")
        finally:
            socket.close()

    late = asyncio.run(keep_two_alive())
    assert fetch(url + "/api/move", {"player": idle["id"], "x": 0, "y": 0})[1] == \
        f"unknown player {idle['id']}"
    # The watching page's socket is closed now: its player left with it.
    wait_until(lambda: player_in(fetch(url + "/api/state")[2], watching["id"]) is None,
               "the watching player left with its socket")
    for p in (acting, late):
        fetch(url + "/api/leave", {"player": p["id"]})
