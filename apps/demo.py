"""The application ``make run`` serves: every demo app under one Tornado Application.

* ``/``              hello, world
* ``/primes/<n>``    the primes up to n, as JSON
* ``/fib/<n>``       the n-th Fibonacci number, recursively
* ``/astar/``        the A-star game: open it in a browser to play

Run alone on stock Tornado with ``python -m apps.demo --port 8888``.
"""

from __future__ import annotations

import tornado.web

from apps import astar, primes
from apps.astar_game import Game


def make_app() -> tornado.web.Application:
    return tornado.web.Application(primes.routes() + astar.routes(Game(), prefix="/astar"))


if __name__ == "__main__":
    from apps.standalone import main

    main(make_app, "All the demo apps (hello, primes, fib, the A-star game) on stock Tornado.")
