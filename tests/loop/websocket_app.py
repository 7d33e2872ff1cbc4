"""A WebSocket echo that numbers what it echoes from one shared counter.

Written the single-threaded way, as Tornado's own chat demo: ``on_message``
bumps a module-level counter and answers its peer with the new count.
"""

from __future__ import annotations

import tornado.web
import tornado.websocket

STATE = {"messages": 0}


class Echo(tornado.websocket.WebSocketHandler):
    def on_message(self, message: str | bytes) -> None:
        STATE["messages"] += 1
        self.write_message(f"{STATE['messages']}:{message}")


class State(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write(dict(STATE))


def make_app() -> tornado.web.Application:
    return tornado.web.Application([(r"/echo", Echo), (r"/state", State)])
