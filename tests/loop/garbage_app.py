"""An application that reports the cyclic garbage its requests leave.

Stock Tornado frees a short request's objects by their reference counts
alone (``finish()`` even breaks the handler's one cycle, its ``ui``). On
free-threaded CPython 3.13 every collection of cyclic garbage visits the
whole heap with every thread stopped, so a request that leaves a cycle
behind costs every core. ``/garbage/start`` empties the collector and
keeps what it would free from then on; ``/garbage`` collects and answers
how many objects of each type were garbage since.
"""

from __future__ import annotations

import collections
import gc

import tornado.web


class Hello(tornado.web.RequestHandler):
    def get(self) -> None:
        self.set_header("X-Hello", "1")
        self.write("Hello, world")


class StartCounting(tornado.web.RequestHandler):
    def get(self) -> None:
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.garbage.clear()
        self.write("counting")


class Garbage(tornado.web.RequestHandler):
    def get(self) -> None:
        gc.collect()
        kinds = collections.Counter(type(item).__qualname__ for item in gc.garbage)
        self.write({"objects": len(gc.garbage), "kinds": dict(kinds)})


def make_app() -> tornado.web.Application:
    return tornado.web.Application([(r"/", Hello), (r"/garbage/start", StartCounting),
                                    (r"/garbage", Garbage)])
