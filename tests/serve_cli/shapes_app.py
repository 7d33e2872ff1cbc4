"""Tornado applications written the usual ways, for ``tornado-stm serve`` to run unchanged.

* ``make_app``: a factory that starts a ``PeriodicCallback`` (it must fire);
* ``make_app_async``: an ``async`` factory;
* ``main``: Tornado's standard shape, options parsed from the command line,
  listening by itself and waiting for ever;
* ``app``: an Application object.

Every handler answers what the tests look at: the greeting (a
``tornado.options`` option), the ticks of the periodic callback, what
Tornado believes about the request (remote IP, protocol), and which thread
answered after some computing.
"""

from __future__ import annotations

import asyncio
import os
import threading

import tornado.ioloop
import tornado.web
from tornado.options import define, options, parse_command_line

define("port", default=8888, help="port to listen on (main only)")
define("greeting", default="hello", help="what / answers")

TICKS = [0]


class GreetingHandler(tornado.web.RequestHandler):
    # The options are read when the application is built (not in the handler:
    # a handler reading tornado.options sometimes keeps the server from
    # seeing SIGTERM, a loop bug reported separately).
    def get(self) -> None:
        self.write({"greeting": self.settings["greeting"], "env": self.settings["colour"]})


class TicksHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write({"ticks": TICKS[0]})


class WhoHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write({"remote_ip": self.request.remote_ip, "protocol": self.request.protocol})


class ThreadHandler(tornado.web.RequestHandler):
    """Computes for a moment (no sleep: the loop is busy), then names its thread."""

    def get(self) -> None:
        total = 0
        for i in range(200_000):
            total += i
        self.write({"thread": threading.current_thread().name, "total": total})


def tick() -> None:
    TICKS[0] += 1


def build(**settings: object) -> tornado.web.Application:
    return tornado.web.Application([(r"/", GreetingHandler), (r"/ticks", TicksHandler),
                                    (r"/who", WhoHandler), (r"/thread", ThreadHandler)], greeting=options.greeting,
                                   colour=os.environ.get("SHAPES_APP_COLOUR"), **settings)


def make_app() -> tornado.web.Application:
    tornado.ioloop.PeriodicCallback(tick, 20).start()
    return build()


def make_app_with_options() -> tornado.web.Application:
    parse_command_line()
    return build()


async def make_app_async() -> tornado.web.Application:
    await asyncio.sleep(0.01)
    return build()


async def main() -> None:
    parse_command_line()
    app = build()
    app.listen(options.port, address="127.0.0.1")
    await asyncio.Event().wait()


app = build()


if __name__ == "__main__":
    asyncio.run(main())
