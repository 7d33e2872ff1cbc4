"""Coroutine handlers that share module-level synchronization primitives.

The shapes of Tornado's chat demo and of ordinary asyncio code, written for
one event loop: a ``tornado.locks.Condition`` that ``/wait`` requests wait
on until ``/post`` notifies it, and an ``asyncio.Lock`` held by ``/inc``
across an ``await`` while it reads, sleeps and writes a counter. Under
``tornado-stm serve`` with one loop per thread, a waiter and the notifier
(or two holders of the lock) are on different loops.
"""

from __future__ import annotations

import asyncio

import tornado.locks
import tornado.web

MESSAGES: list[str] = []
NEW_MESSAGE = tornado.locks.Condition()
COUNTER_LOCK = asyncio.Lock()
COUNTER = {"n": 0}


class WaitHandler(tornado.web.RequestHandler):
    async def get(self) -> None:
        while not MESSAGES:
            await NEW_MESSAGE.wait()
        self.write({"messages": list(MESSAGES)})


class PostHandler(tornado.web.RequestHandler):
    def post(self) -> None:
        MESSAGES.append(self.get_argument("text", "hi"))
        NEW_MESSAGE.notify_all()
        self.write({"posted": len(MESSAGES)})


class CounterHandler(tornado.web.RequestHandler):
    async def post(self) -> None:
        async with COUNTER_LOCK:
            seen = COUNTER["n"]
            await asyncio.sleep(0.001)       # another request would step in here
            COUNTER["n"] = seen + 1
        self.write({"n": COUNTER["n"]})

    def get(self) -> None:
        self.write(COUNTER)


def make_app() -> tornado.web.Application:
    return tornado.web.Application([(r"/wait", WaitHandler), (r"/post", PostHandler),
                                    (r"/counter", CounterHandler)])
