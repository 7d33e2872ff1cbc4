"""The A-star game with a small player limit and a short idle timeout, for the tests.

Served like any app: ``python -m tests.apps.astar_short_idle --port N`` on
stock Tornado, ``tornado-stm serve tests.apps.astar_short_idle:make_app``.
"""

from __future__ import annotations

import tornado.web

from apps import astar

MAX_PLAYERS = 3
IDLE_TIMEOUT = 4.0


def make_app() -> tornado.web.Application:
    return astar.make_app(max_players=MAX_PLAYERS, idle_timeout=IDLE_TIMEOUT)


if __name__ == "__main__":
    from apps.standalone import main

    main(make_app, "The A-star game, 3 players at most, expiring after 4 idle seconds.")
