"""The A-star game over HTTP: JSON in and out, and a page to play it.

Routes, under a prefix (``""`` when served alone, ``/astar`` in the demo):

=====================  ==================================================
``GET  /``             the game page (canvas; mouse and keys)
``GET  /api/state``    map, players, last paths, walls version
``POST /api/join``     ``{"name": str}`` -> ``{"player": {...}}``
``POST /api/leave``    ``{"player": id}``
``POST /api/move``     ``{"player": id, "x": int, "y": int}`` (a neighbour cell)
``POST /api/wall``     ``{"player": id, "x": int, "y": int, "wall": bool}``
``POST /api/path``     ``{"player": id, "to": [x, y], "from": [x, y]?}``
``WS   /api/updates``  the state, pushed whenever it changes (see below)
=====================  ==================================================

``/api/updates`` is a WebSocket. On opening it sends the whole state (the
body of ``/api/state``), then the state again each time the game changes,
at most every ``PUSH_INTERVAL`` seconds; a push leaves the map out
(``"grid"`` absent) when its walls version is the one the socket was last
sent. The page sends ``{"player": id}`` on it when it has joined, and again
every few seconds: that keeps the player from expiring while the page is
open, and the player leaves the game when the socket closes.

Malformed input (bad JSON, missing or mistyped fields, cells off the map,
unknown players) gets 400 and ``{"error": reason}``; a move or wall the
rules refuse right now gets 409 with the same shape. Run alone with
``python -m apps.astar --port 8888``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import tornado.ioloop
import tornado.web
import tornado.websocket

from apps.astar_game import BadRequest, Game, Refused

STATIC_DIR = os.path.join(os.path.dirname(__file__), "static", "astar")
MAX_NAME_LENGTH = 20
#: Seconds between two pushes to one socket: a burst of changes is one push.
PUSH_INTERVAL = 0.05


class Watchers:
    """The open ``/api/updates`` sockets, told when the game changes.

    Plain shared state, like the game: sockets are added and removed by
    their own handlers, and every action that changes the game calls
    ``changed``.
    """

    def __init__(self) -> None:
        self.sockets: set[UpdatesSocket] = set()

    def changed(self) -> None:
        for socket in self.sockets:
            socket.wake()


class GameHandler(tornado.web.RequestHandler):
    """Base of the JSON endpoints: the game, errors as ``{"error": reason}``."""

    def initialize(self, game: Game, watchers: Watchers) -> None:
        self.game = game
        self.watchers = watchers

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.finish({"error": self._reason})


class StateHandler(GameHandler):
    def get(self) -> None:
        self.set_header("Cache-Control", "no-store")
        self.write(self.game.snapshot())


class ActionHandler(GameHandler):
    """A POST with a JSON object body, answered by ``act``."""

    def post(self) -> None:
        try:
            answer = self.act(self.json_body())
        except BadRequest as exc:
            raise tornado.web.HTTPError(400, reason=str(exc)) from None
        except Refused as exc:
            raise tornado.web.HTTPError(409, reason=str(exc)) from None
        self.watchers.changed()
        self.write(answer)

    def act(self, body: dict) -> dict:
        raise NotImplementedError

    def json_body(self) -> dict:
        try:
            body = json.loads(self.request.body or b"null")
        except ValueError as exc:  # also catches bad UTF-8
            raise BadRequest(f"malformed JSON: {exc}") from None
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object")
        return body

    @staticmethod
    def integer(body: dict, key: str) -> int:
        value = body.get(key)
        # bool is an int in Python, but true is not a coordinate.
        if not isinstance(value, int) or isinstance(value, bool):
            raise BadRequest(f"{key!r} must be an integer")
        return value

    @staticmethod
    def cell(body: dict, key: str) -> tuple[int, int]:
        value = body.get(key)
        if (not isinstance(value, list) or len(value) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
            raise BadRequest(f"{key!r} must be a cell [x, y] of two integers")
        return (value[0], value[1])

    def player_id(self, body: dict) -> int:
        return self.integer(body, "player")


class JoinHandler(ActionHandler):
    def act(self, body: dict) -> dict:
        name = body.get("name", "player")
        if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_LENGTH:
            raise BadRequest(f"'name' must be a string of 1..{MAX_NAME_LENGTH} characters")
        return {"player": self.game.join(name).to_json()}


class LeaveHandler(ActionHandler):
    def act(self, body: dict) -> dict:
        self.game.leave(self.player_id(body))
        return {"left": True}


class MoveHandler(ActionHandler):
    def act(self, body: dict) -> dict:
        player = self.game.move(self.player_id(body), self.integer(body, "x"),
                                self.integer(body, "y"))
        return {"player": player.to_json()}


class WallHandler(ActionHandler):
    def act(self, body: dict) -> dict:
        wall = body.get("wall", True)
        if not isinstance(wall, bool):
            raise BadRequest("'wall' must be true (build) or false (destroy)")
        x, y = self.integer(body, "x"), self.integer(body, "y")
        version = self.game.set_wall(self.player_id(body), x, y, wall)
        return {"x": x, "y": y, "wall": wall, "walls_version": version}


class PathHandler(ActionHandler):
    def act(self, body: dict) -> dict:
        start = self.cell(body, "from") if "from" in body else None
        path, version = self.game.ask_path(self.player_id(body), self.cell(body, "to"), start)
        return {"path": None if path is None else [list(c) for c in path],
                "walls_version": version}


class UpdatesSocket(tornado.websocket.WebSocketHandler):
    """``/api/updates``: pushes the state to one page while it is open.

    Pushes run on the loop that owns this connection (``add_callback`` is
    the one IOLoop method that may be called from anywhere), so an action
    handled elsewhere only asks for a push.
    """

    def initialize(self, game: Game, watchers: Watchers) -> None:
        self.game = game
        self.watchers = watchers
        self.player_id: int | None = None   # the page's player, once it said so
        self.sent_walls_version = -1        # the map this socket has
        self.push_asked = False             # a push is on its way
        self.last_push = 0.0

    def open(self) -> None:
        self.loop = tornado.ioloop.IOLoop.current()
        self.watchers.sockets.add(self)
        self.push_asked = True
        self.push()

    def on_message(self, message: str | bytes) -> None:
        """``{"player": id}``: this page plays as ``id``, and is still open."""
        try:
            player_id = json.loads(message)["player"]
        except (ValueError, KeyError, TypeError):
            return
        if not isinstance(player_id, int) or isinstance(player_id, bool):
            return
        try:
            self.game.touch(player_id)
        except BadRequest:
            return  # an unknown or expired player: the page sees it is gone and joins again
        self.player_id = player_id

    def on_close(self) -> None:
        self.watchers.sockets.discard(self)
        if self.player_id is not None and self.player_id in self.game.players:
            self.game.leave(self.player_id)
            self.watchers.changed()

    def wake(self) -> None:
        """The game changed: push it soon (called from any handler)."""
        if not self.push_asked:
            self.push_asked = True
            self.loop.add_callback(self.push_later)

    def push_later(self) -> None:
        self.loop.call_at(max(self.loop.time(), self.last_push + PUSH_INTERVAL), self.push)

    def push(self) -> None:
        self.push_asked = False
        self.last_push = self.loop.time()
        state = self.game.snapshot(grid=self.game.walls_version != self.sent_walls_version)
        self.sent_walls_version = state["walls_version"]
        try:
            self.write_message(state)
        except tornado.websocket.WebSocketClosedError:
            pass  # the page went away meanwhile; on_close cleans up


def routes(game: Game, prefix: str = "", watchers: Watchers | None = None) -> list[tuple]:
    """The game's URL rules under ``prefix`` (no trailing slash)."""
    shared = {"game": game, "watchers": Watchers() if watchers is None else watchers}
    endpoints = {"state": StateHandler, "join": JoinHandler, "leave": LeaveHandler,
                 "move": MoveHandler, "wall": WallHandler, "path": PathHandler,
                 "updates": UpdatesSocket}
    rules: list[tuple] = [(f"{prefix}/api/{name}", handler, shared)
                          for name, handler in endpoints.items()]
    if prefix:
        # The page fetches "api/..." relative to itself: it needs the slash.
        rules.append((prefix, tornado.web.RedirectHandler, {"url": f"{prefix}/"}))
    rules.append((f"{prefix}/(.*)", tornado.web.StaticFileHandler,
                  {"path": STATIC_DIR, "default_filename": "index.html"}))
    return rules


def make_app(**game_options: Any) -> tornado.web.Application:
    """The game alone at ``/``; ``game_options`` go to ``Game``."""
    return tornado.web.Application(routes(Game(**game_options)))


if __name__ == "__main__":
    from apps.standalone import main

    main(make_app, "The A-star game on stock Tornado.")
