"""The A-star game end to end over real HTTP: the page, the API, 400s and 409s."""

from __future__ import annotations

import pytest

from tests.apps.http_helpers import fetch


def api(server, endpoint: str, body=None, **kwargs):
    return fetch(f"{server.url}/astar/api/{endpoint}", body, **kwargs)


def test_page_is_served_and_redirected(demo_server) -> None:
    status, _, page = fetch(demo_server.url + "/astar")  # follows the redirect to /astar/
    assert status == 200 and '<canvas id="map"' in page and 'src="game.js"' in page
    status, _, script = fetch(demo_server.url + "/astar/game.js")
    assert status == 200 and 'fetch("api/state"' in script


def test_a_player_joins_moves_builds_and_asks_a_path(demo_server) -> None:
    status, _, joined = api(demo_server, "join", {"name": "alice"})
    assert status == 200
    me = joined["player"]
    state = api(demo_server, "state")[2]
    assert {"id": me["id"], "name": "alice", "x": me["x"], "y": me["y"], "moves": 0} \
        in state["players"]
    grid, w, h = state["grid"], state["width"], state["height"]
    occupied = {(p["x"], p["y"]) for p in state["players"]}
    free_neighbours = [(x, y) for x, y in [(me["x"] + 1, me["y"]), (me["x"] - 1, me["y"]),
                                           (me["x"], me["y"] + 1), (me["x"], me["y"] - 1)]
                       if 0 <= x < w and 0 <= y < h and not grid[y][x]
                       and (x, y) not in occupied]
    assert free_neighbours, "the join spot should have a free neighbour on this map"
    x, y = free_neighbours[0]

    status, _, moved = api(demo_server, "move", {"player": me["id"], "x": x, "y": y})
    assert status == 200 and moved["player"]["x"] == x and moved["player"]["moves"] == 1

    # Wall where we came from, then a path back there is impossible; destroy it.
    status, _, built = api(demo_server, "wall", {"player": me["id"], "x": me["x"],
                                                 "y": me["y"], "wall": True})
    assert status == 200 and built["walls_version"] == state["walls_version"] + 1
    status, _, answer = api(demo_server, "path", {"player": me["id"], "to": [me["x"], me["y"]]})
    assert (status, answer["path"]) == (200, None)
    api(demo_server, "wall", {"player": me["id"], "x": me["x"], "y": me["y"], "wall": False})
    status, _, answer = api(demo_server, "path", {"player": me["id"], "to": [me["x"], me["y"]]})
    assert status == 200 and answer["path"] == [[x, y], [me["x"], me["y"]]]
    assert api(demo_server, "state")[2]["paths"][str(me["id"])] == answer["path"]

    assert api(demo_server, "leave", {"player": me["id"]})[0] == 200
    assert me["id"] not in {p["id"] for p in api(demo_server, "state")[2]["players"]}


@pytest.mark.parametrize("endpoint, body, reason", [
    ("move", b"{not json", "malformed JSON: Expecting property name enclosed in double quotes: "
                           "line 1 column 2 (char 1)"),
    ("move", b"\xff\xfe", None),
    ("move", b"", "the body must be a JSON object"),
    ("move", b"[1, 2]", "the body must be a JSON object"),
    ("move", {"player": 424242, "x": 0, "y": 0}, "unknown player 424242"),
    ("move", {"player": "1", "x": 0, "y": 0}, "'player' must be an integer"),
    ("move", {"player": "PLAYER", "x": 1000, "y": 0}, "x=1000 is off the map (0..95)"),
    ("move", {"player": "PLAYER", "x": 0, "y": -1}, "y=-1 is off the map (0..63)"),
    ("move", {"player": "PLAYER", "x": True, "y": 0}, "'x' must be an integer"),
    ("move", {"player": "PLAYER", "x": 1.5, "y": 0}, "'x' must be an integer"),
    ("wall", {"player": "PLAYER", "x": 0}, "'y' must be an integer"),
    ("wall", {"player": "PLAYER", "x": 0, "y": 0, "wall": "yes"},
     "'wall' must be true (build) or false (destroy)"),
    ("path", {"player": "PLAYER", "to": [1]}, "'to' must be a cell [x, y] of two integers"),
    ("path", {"player": "PLAYER", "to": [0, 99]}, "y=99 is off the map (0..63)"),
    ("path", {"player": "PLAYER", "to": [0, 0], "from": "here"},
     "'from' must be a cell [x, y] of two integers"),
    ("join", {"name": ""}, "'name' must be a string of 1..20 characters"),
    ("join", {"name": 7}, "'name' must be a string of 1..20 characters"),
    ("leave", {}, "'player' must be an integer"),
])
def test_bad_input_gets_400_with_a_reason(demo_server, endpoint, body, reason) -> None:
    player = api(demo_server, "join", {"name": "probe"})[2]["player"]["id"]
    if isinstance(body, dict):
        body = {k: (player if v == "PLAYER" else v) for k, v in body.items()}
        status, status_reason, answer = api(demo_server, endpoint, body)
    else:
        status, status_reason, answer = api(demo_server, endpoint, raw_body=body)
    assert status == 400
    assert answer == {"error": status_reason}
    if reason is not None:
        assert status_reason == reason
    else:
        assert status_reason.startswith("malformed JSON")


def test_refused_moves_and_walls_get_409(demo_server) -> None:
    a = api(demo_server, "join", {"name": "a"})[2]["player"]
    b = api(demo_server, "join", {"name": "b"})[2]["player"]
    status, reason, answer = api(demo_server, "move", {"player": a["id"], "x": b["x"], "y": b["y"]})
    assert status == 409 and answer == {"error": reason}  # b is not next to a (or is taken)
    status, reason, _ = api(demo_server, "wall", {"player": a["id"], "x": b["x"], "y": b["y"]})
    assert (status, reason) == (409, f"player {b['id']} stands at ({b['x']}, {b['y']})")
