"""A Tornado application for the fault tests: handlers that compute, for a while or for ever.

Ordinary single-threaded Tornado code; ``tornado-stm serve`` instruments it,
so the sync handlers below run as atomic sections that compute without the
world lock.
"""

from __future__ import annotations

import time

import tornado.web


def spin(seconds: float) -> int:
    """Burn CPU for ``seconds`` (for ever when negative), in plain Python."""
    deadline = time.monotonic() + seconds
    turns = 0
    while seconds < 0 or time.monotonic() < deadline:
        turns += 1
    return turns


class HelloHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write("Hello, world\n")


class ComputeHandler(tornado.web.RequestHandler):
    """CPU-bound for ``tenths`` tenths of a second."""

    def get(self, tenths: str) -> None:
        self.write(f"computed {spin(int(tenths) / 10) > 0}\n")


class RunawayHandler(tornado.web.RequestHandler):
    """Never returns: a runaway computation."""

    def get(self) -> None:
        spin(-1)
        self.write("unreachable\n")


def make_app() -> tornado.web.Application:
    return tornado.web.Application([
        (r"/hello", HelloHandler),
        (r"/compute/(\d+)", ComputeHandler),
        (r"/runaway", RunawayHandler),
    ])


async def main() -> None:
    """Tornado's usual shape: listen by itself (``-- --listen-port N``), then wait for ever."""
    import argparse
    import asyncio

    parser = argparse.ArgumentParser()
    parser.add_argument("--listen-port", type=int, required=True)
    make_app().listen(parser.parse_args().listen_port, address="127.0.0.1")
    await asyncio.Event().wait()
