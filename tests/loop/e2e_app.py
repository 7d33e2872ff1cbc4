"""A Tornado application that touches every HTTP feature the end-to-end tests check.

Written the ordinary single-threaded Tornado way. The tests serve it twice,
with ``tornado-stm serve e2e_app:make_app`` and with stock Tornado on
asyncio's own loop (``python e2e_app.py --port N``), and compare answers.

``/parallel/<n>`` does what an instrumented handler's atomic section does:
it gives the world lock up around a pure computation and takes it back to
write its answer, so the tests can watch handlers overlap.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import threading
import time

import tornado.httpserver
import tornado.web
import tornado.websocket

from tornado_stm.stm.worldlock import WORLD_LOCK

STATIC_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")

#: Spans of /parallel sections: (start, end, thread name), for the overlap test.
SECTION_SPANS: list[tuple[float, float, str]] = []


class HelloHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write("Hello, world\n")

    def post(self) -> None:
        name = self.get_argument("name", "nobody")
        self.write({"hello": name, "length": len(self.request.body)})


class ChunkedHandler(tornado.web.RequestHandler):
    async def get(self) -> None:
        for i in range(5):
            self.write(f"chunk {i}\n" * 100)
            await self.flush()


class RedirectHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.redirect("/hello?from=redirect")


class CookieHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        visits = int(self.get_cookie("visits", "0")) + 1
        self.set_cookie("visits", str(visits))
        self.set_signed_cookie("signed", f"visit-{visits}")
        self.write({"visits": visits, "signed": (self.get_signed_cookie("signed") or b"").decode()})


class BrokenHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        raise ZeroDivisionError("this handler is broken on purpose")


@tornado.web.stream_request_body
class UploadHandler(tornado.web.RequestHandler):
    def prepare(self) -> None:
        self.chunks = 0
        self.received = 0
        self.checksum = 0

    def data_received(self, chunk: bytes) -> None:
        self.chunks += 1
        self.received += len(chunk)
        self.checksum = (self.checksum + sum(chunk)) % 1_000_003

    def put(self) -> None:
        self.write({"received": self.received, "checksum": self.checksum,
                    "streamed": self.chunks >= 1})


class SlowHandler(tornado.web.RequestHandler):
    async def get(self, tenths: str) -> None:
        await asyncio.sleep(int(tenths) / 10)
        self.write(f"slept {tenths} tenths\n")


class DripHandler(tornado.web.RequestHandler):
    """Answers in two parts: the client knows the request is in flight."""

    async def get(self, tenths: str) -> None:
        self.write("start\n")
        await self.flush()
        await asyncio.sleep(int(tenths) / 10)
        self.write("end\n")


def count_primes(limit: int) -> int:
    """Trial division: pure computation, no shared state."""
    found = 0
    for n in range(2, limit):
        if all(n % d for d in range(2, int(n ** 0.5) + 1)):
            found += 1
    return found


class ParallelHandler(tornado.web.RequestHandler):
    def get(self, limit: str) -> None:
        on_stm_loop = WORLD_LOCK.held_by_current_thread()  # False on stock Tornado
        token = WORLD_LOCK.suspend() if on_stm_loop else None
        start = time.monotonic()
        primes = count_primes(int(limit))
        span = (start, time.monotonic(), threading.current_thread().name)
        if on_stm_loop:
            WORLD_LOCK.resume(token)
        SECTION_SPANS.append(span)  # shared state: only under W
        self.write({"primes": primes})


class BusyHandler(tornado.web.RequestHandler):
    """Keeps its loop's thread busy (a blocking wait), then names the thread."""

    def get(self, tenths: str) -> None:
        time.sleep(int(tenths) / 10)
        self.write({"thread": threading.current_thread().name})


class SpansHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write({"spans": SECTION_SPANS})


class EchoWebSocket(tornado.websocket.WebSocketHandler):
    def on_message(self, message: str | bytes) -> None:
        if isinstance(message, bytes):
            self.write_message(message[::-1], binary=True)
        else:
            self.write_message("echo: " + message)


def make_app() -> tornado.web.Application:
    return tornado.web.Application([
        (r"/hello", HelloHandler),
        (r"/chunked", ChunkedHandler),
        (r"/redirect", RedirectHandler),
        (r"/cookies", CookieHandler),
        (r"/broken", BrokenHandler),
        (r"/upload", UploadHandler),
        (r"/slow/(\d+)", SlowHandler),
        (r"/drip/(\d+)", DripHandler),
        (r"/parallel/(\d+)", ParallelHandler),
        (r"/busy/(\d+)", BusyHandler),
        (r"/spans", SpansHandler),
        (r"/ws", EchoWebSocket),
    ], static_path=STATIC_PATH, cookie_secret="e2e-tests-only", compress_response=True)


async def serve_stock(port: int) -> None:
    """Stock Tornado on asyncio's own loop: the reference the tests compare with."""
    server = tornado.httpserver.HTTPServer(make_app())
    server.listen(port, address="127.0.0.1")
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the e2e test app on stock Tornado")
    parser.add_argument("--port", type=int, required=True)
    asyncio.run(serve_stock(parser.parse_args().port))
