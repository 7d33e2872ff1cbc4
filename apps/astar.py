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
=====================  ==================================================

Malformed input (bad JSON, missing or mistyped fields, cells off the map,
unknown players) gets 400 and ``{"error": reason}``; a move or wall the
rules refuse right now gets 409 with the same shape. Run alone with
``python -m apps.astar --port 8888``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import tornado.web

from apps.astar_game import BadRequest, Game, Refused

STATIC_DIR = os.path.join(os.path.dirname(__file__), "static", "astar")
MAX_NAME_LENGTH = 20


class GameHandler(tornado.web.RequestHandler):
    """Base of the JSON endpoints: the game, errors as ``{"error": reason}``."""

    def initialize(self, game: Game) -> None:
        self.game = game

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
            self.write(self.act(self.json_body()))
        except BadRequest as exc:
            raise tornado.web.HTTPError(400, reason=str(exc)) from None
        except Refused as exc:
            raise tornado.web.HTTPError(409, reason=str(exc)) from None

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


def routes(game: Game, prefix: str = "") -> list[tuple]:
    """The game's URL rules under ``prefix`` (no trailing slash)."""
    endpoints = {"state": StateHandler, "join": JoinHandler, "leave": LeaveHandler,
                 "move": MoveHandler, "wall": WallHandler, "path": PathHandler}
    rules: list[tuple] = [(f"{prefix}/api/{name}", handler, {"game": game})
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
