"""Coroutine handlers that share module-level synchronization primitives.

The shapes of Tornado's chat demo and of ordinary asyncio code, written for
one event loop: a ``tornado.locks.Condition`` that ``/wait`` requests wait
on until ``/post`` notifies it, and an ``asyncio.Lock`` held by ``/inc``
across an ``await`` while it reads, sleeps and writes a counter. Under
``tornado-stm serve`` with one loop per thread, a waiter and the notifier
(or two holders of the lock) are on different loops.

Red-team round 12 added three more: a producer and consumers on an
``asyncio.Condition`` (``/produce``, ``/consume``), waiters on an
``asyncio.Event`` pulsed by a plain handler (``/pulse``, ``/parked``), and
a single-flight cache whose requests await the ``Future`` of the first
request for the same key (``/cached``). ``/state`` reports what each keeps.
"""

from __future__ import annotations

import asyncio

import tornado.locks
import tornado.web

MESSAGES: list[str] = []
NEW_MESSAGE = tornado.locks.Condition()
COUNTER_LOCK = asyncio.Lock()
COUNTER = {"n": 0}

ITEMS = asyncio.Condition()
PULSE = asyncio.Event()
CACHE: dict[str, str] = {}
IN_FLIGHT: dict[str, "asyncio.Future[str]"] = {}
# Every serial run keeps: one holder of ITEMS at a time (violations 0),
# items never below 0, woken counts the waiters answered.
STATE = {"items": 0, "holders": 0, "violations": 0, "negative": 0,
         "consumed": 0, "produced": 0, "pulses": 0, "woken": 0, "computed": 0}


def _hold_items() -> None:
    STATE["holders"] += 1
    if STATE["holders"] != 1:
        STATE["violations"] += 1


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


class ConsumeHandler(tornado.web.RequestHandler):
    async def post(self) -> None:
        async with ITEMS:
            _hold_items()
            while STATE["items"] == 0:
                STATE["holders"] -= 1
                await ITEMS.wait()
                _hold_items()
            STATE["items"] -= 1
            if STATE["items"] < 0:
                STATE["negative"] += 1
            STATE["consumed"] += 1
            STATE["holders"] -= 1
        self.write("consumed")


class ProduceHandler(tornado.web.RequestHandler):
    async def post(self) -> None:
        async with ITEMS:
            _hold_items()
            STATE["items"] += 1
            STATE["produced"] += 1
            ITEMS.notify_all()
            STATE["holders"] -= 1
        self.write("produced")


class ParkedHandler(tornado.web.RequestHandler):
    async def get(self) -> None:
        await PULSE.wait()
        STATE["woken"] += 1
        self.write("woken")


class PulseHandler(tornado.web.RequestHandler):
    def post(self) -> None:
        STATE["pulses"] += 1
        PULSE.set()
        PULSE.clear()


class CachedHandler(tornado.web.RequestHandler):
    async def get(self) -> None:
        key = self.get_argument("key")
        if key in CACHE:
            self.write(CACHE[key])
            return
        pending = IN_FLIGHT.get(key)
        if pending is None:
            pending = IN_FLIGHT[key] = asyncio.get_running_loop().create_future()
            await asyncio.sleep(0.02)          # the slow computation
            STATE["computed"] += 1
            CACHE[key] = key.upper()
            del IN_FLIGHT[key]
            pending.set_result(CACHE[key])
        self.write(await pending)


class StateHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write(STATE)


def make_app() -> tornado.web.Application:
    return tornado.web.Application([(r"/wait", WaitHandler), (r"/post", PostHandler),
                                    (r"/counter", CounterHandler),
                                    (r"/consume", ConsumeHandler), (r"/produce", ProduceHandler),
                                    (r"/parked", ParkedHandler), (r"/pulse", PulseHandler),
                                    (r"/cached", CachedHandler), (r"/state", StateHandler)])
