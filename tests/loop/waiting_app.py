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

Red-team round 41 added the timeouts of Tornado's primitives, which fire
on the waiter's loop while another loop notifies or releases: consumers
waiting on a ``tornado.locks.Condition`` with short timeouts, producers
notifying one waiter (``/tconsume``, ``/tproduce``), and holders of a
``tornado.locks.Semaphore`` acquired with a timeout (``/permit``).
"""

from __future__ import annotations

import asyncio
import datetime
import random

import tornado.locks
import tornado.util
import tornado.web

MESSAGES: list[str] = []
NEW_MESSAGE = tornado.locks.Condition()
COUNTER_LOCK = asyncio.Lock()
COUNTER = {"n": 0}

ITEMS = asyncio.Condition()
PULSE = asyncio.Event()
CACHE: dict[str, str] = {}
IN_FLIGHT: dict[str, "asyncio.Future[str]"] = {}
TIMED = tornado.locks.Condition()
TIMED_ITEMS: list[int] = []
PERMITS = tornado.locks.Semaphore(2)
# Every serial run keeps: one holder of ITEMS at a time (violations 0),
# items never below 0, woken counts the waiters answered; a notify(1) that
# finds a waiter not timed out wakes that one (notified == live_notifies,
# unwoken 0); at most two holders of PERMITS, and its permits come back.
STATE = {"items": 0, "holders": 0, "violations": 0, "negative": 0,
         "consumed": 0, "produced": 0, "pulses": 0, "woken": 0, "computed": 0,
         "notified": 0, "live_notifies": 0, "unwoken": 0, "timed_consumed": 0,
         "permit_holders": 0, "most_permit_holders": 0, "permits_got": 0, "permit_timeouts": 0}


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


class TimedConsumeHandler(tornado.web.RequestHandler):
    async def post(self) -> None:
        pause = random.Random(self.get_argument("seed"))
        while not TIMED_ITEMS:
            timeout = datetime.timedelta(milliseconds=pause.randint(1, 8))
            if await TIMED.wait(timeout=timeout):
                STATE["notified"] += 1
        TIMED_ITEMS.pop(0)
        STATE["timed_consumed"] += 1


class TimedProduceHandler(tornado.web.RequestHandler):
    async def post(self) -> None:
        # In one step: the waiter notify(1) will wake, then the notify.
        live = next((waiter for waiter in TIMED._waiters if not waiter.done()), None)
        TIMED_ITEMS.append(1)
        TIMED.notify(1)
        if live is not None:
            STATE["live_notifies"] += 1
            if not (live.done() and not live.cancelled() and live.result() is True):
                STATE["unwoken"] += 1


class PermitHandler(tornado.web.RequestHandler):
    async def post(self) -> None:
        pause = random.Random(self.get_argument("seed"))
        try:
            await PERMITS.acquire(timeout=datetime.timedelta(milliseconds=pause.randint(1, 6)))
        except tornado.util.TimeoutError:
            STATE["permit_timeouts"] += 1
            return
        STATE["permits_got"] += 1
        STATE["permit_holders"] += 1
        STATE["most_permit_holders"] = max(STATE["most_permit_holders"], STATE["permit_holders"])
        await asyncio.sleep(pause.random() * 0.004)
        STATE["permit_holders"] -= 1
        PERMITS.release()


class StateHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write({**STATE, "permits": PERMITS._value, "timed_items": len(TIMED_ITEMS)})


def make_app() -> tornado.web.Application:
    return tornado.web.Application([(r"/wait", WaitHandler), (r"/post", PostHandler),
                                    (r"/counter", CounterHandler),
                                    (r"/consume", ConsumeHandler), (r"/produce", ProduceHandler),
                                    (r"/parked", ParkedHandler), (r"/pulse", PulseHandler),
                                    (r"/cached", CachedHandler), (r"/tconsume", TimedConsumeHandler),
                                    (r"/tproduce", TimedProduceHandler), (r"/permit", PermitHandler),
                                    (r"/state", StateHandler)])
