"""The A-star game on a large map, as the 2014 PyPy-STM benchmark played it.

The same game and page as ``apps.astar`` (served at ``/``), on a 200 x 200
map with 30 % walls: a search between far cells there explores thousands
of cells, so the work is in long searches over one shared map rather than
in many short requests. ``bench_astar --mix search`` plays it. Run alone
with ``python -m apps.astar_large --port 8888``.
"""

from __future__ import annotations

import tornado.web

from apps import astar

#: The map: at least 200 x 200, as issue 10 asks; denser walls than the
#: default 20 % make paths wind, and searches longer.
WIDTH = HEIGHT = 200
WALL_DENSITY = 0.3


def make_app() -> tornado.web.Application:
    return astar.make_app(width=WIDTH, height=HEIGHT, wall_density=WALL_DENSITY)


if __name__ == "__main__":
    from apps.standalone import main

    main(make_app, "The A-star game on a large map (200 x 200) on stock Tornado.")
