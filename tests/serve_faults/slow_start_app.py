"""An application that takes a few seconds to import: a signal can arrive while serve starts."""

from __future__ import annotations

import time

import tornado.web

print("slow_start_app: loading", flush=True)
time.sleep(4)


class HelloHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write("Hello, world\n")


def make_app() -> tornado.web.Application:
    return tornado.web.Application([(r"/hello", HelloHandler)])
