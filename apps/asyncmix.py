"""An ``async def`` handler mix: await a timer, then compute.

Most Tornado handlers written today are coroutines that wait for something
(a database, another service) and then do some work with the answer. This
app is that shape, with a timer standing for the wait:

* ``GET /``       hello, world (the server's probe)
* ``GET /work``   awaits ``asyncio.sleep`` for ``ms`` milliseconds (default
  5), then counts the primes up to ``n`` (default 1000, about 5 ms of trial
  division on CPython 3.11) and returns ``{"waited_ms": ms, "n": n, "primes": count}``

Run alone with ``python -m apps.asyncmix --port 8888``; ``make bench`` loads
``/work`` with wrk.
"""

from __future__ import annotations

import asyncio

import tornado.web

from apps.primes import HelloHandler, PlainErrorHandler, primes_up_to

DEFAULT_MS = 5
DEFAULT_N = 1000
#: Bounds, so that one request cannot hold a connection or a core for long.
MAX_MS = 1000
MAX_N = 20_000


class WorkHandler(PlainErrorHandler):
    async def get(self) -> None:
        ms = self.bounded("ms", DEFAULT_MS, MAX_MS)
        n = self.bounded("n", DEFAULT_N, MAX_N)
        await asyncio.sleep(ms / 1000)  # the wait: a database, another service...
        self.write({"waited_ms": ms, "n": n, "primes": len(primes_up_to(n))})

    def bounded(self, name: str, default: int, limit: int) -> int:
        """The query argument ``name`` as an int in 0..limit, or a 400 with the reason."""
        text = self.get_query_argument(name, str(default))
        if not text.isdigit():
            raise tornado.web.HTTPError(400, reason=f"{name} must be a non-negative integer")
        if int(text) > limit:
            raise tornado.web.HTTPError(400, reason=f"{name} must be at most {limit}")
        return int(text)


def routes() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [(r"/", HelloHandler), (r"/work", WorkHandler)]


def make_app() -> tornado.web.Application:
    return tornado.web.Application(routes())


if __name__ == "__main__":
    from apps.standalone import main

    main(make_app, "An async def handler mix (await a timer, then compute) on stock Tornado.")
