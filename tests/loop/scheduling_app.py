"""Handlers that put work on the event loop: ``add_callback``, ``call_soon``,
``call_later``, a future's ``add_done_callback``.

Every request appends one entry to EVENTS through a callback it schedules:
a library callable (``EVENTS.append``) handed to the loop, or an
application function. /rewrite runs sections that read EVENTS and write it
back (an append and a pop), so a plain append from the loop between such a
section's read and its commit would be lost. In a serial run EVENTS ends
with one entry per request, and /count's application callback sees the
write its section made after scheduling it. /order's two callbacks run in
the order it scheduled them; /undo's remove_done_callback finds the
callback it added just before; /not-a-future's add_future raises where it
is called.
"""

import asyncio

import tornado.ioloop
import tornado.web

EVENTS = []
#: For /count: how many requests ran, and what their callbacks saw of it.
COUNTS = {"sections": 0, "callbacks": 0, "late": 0}
#: For /order: the callbacks' marks, in the order they ran.
ORDER = []
#: For /undo: a future of each loop that never completes, and how many
#: callbacks each remove_done_callback found.
PENDING = {}
REMOVED = []


def spin(n=2000):
    total = 0
    for j in range(n):
        total += j
    return total


def count_callback(expected):
    # Scheduled before its section wrote COUNTS["sections"]: a serial run
    # runs it after the whole section, so it sees the write.
    COUNTS["callbacks"] += 1
    if COUNTS["sections"] < expected:
        COUNTS["late"] += 1


class Ping(tornado.web.RequestHandler):
    def get(self):
        self.write("pong")


class SyncSchedule(tornado.web.RequestHandler):
    def post(self, form):
        value = len(EVENTS)
        if form == "add_callback":
            tornado.ioloop.IOLoop.current().add_callback(EVENTS.append, value)
        elif form == "call_later":
            tornado.ioloop.IOLoop.current().call_later(0.001, EVENTS.append, value)
        elif form == "call_soon":
            asyncio.get_event_loop().call_soon(EVENTS.append, value)
        self.write("ok")


class AsyncSchedule(tornado.web.RequestHandler):
    async def post(self, form):
        await asyncio.sleep(0)
        value = len(EVENTS)
        loop = asyncio.get_running_loop()
        if form == "add_callback":
            tornado.ioloop.IOLoop.current().add_callback(EVENTS.append, value)
        elif form == "call_soon":
            loop.call_soon(EVENTS.append, value)
        elif form == "call_later":
            loop.call_later(0.001, EVENTS.append, value)
        elif form == "done":
            future = loop.create_future()
            future.add_done_callback(EVENTS.append)
            future.set_result(value)
        self.write("ok")


class Rewrite(tornado.web.RequestHandler):
    def post(self):
        seen = len(EVENTS)
        spin()
        EVENTS.append(-1)
        EVENTS.pop()
        self.write({"seen": seen})


class Count(tornado.web.RequestHandler):
    def post(self):
        expected = COUNTS["sections"] + 1
        tornado.ioloop.IOLoop.current().add_callback(count_callback, expected)
        spin()
        COUNTS["sections"] = expected


class Order(tornado.web.RequestHandler):
    def post(self, n):
        tornado.ioloop.IOLoop.current().add_callback(ORDER.append, ("a", n))
        asyncio.get_event_loop().call_soon(ORDER.append, ("b", n))


def never_called(future):
    EVENTS.append("a removed callback ran")


class Undo(tornado.web.RequestHandler):
    def post(self):
        loop = asyncio.get_event_loop()
        future = PENDING.get(id(loop))
        if future is None:
            future = PENDING[id(loop)] = loop.create_future()
        future.add_done_callback(never_called)
        REMOVED.append(future.remove_done_callback(never_called))


class NotAFuture(tornado.web.RequestHandler):
    def post(self):
        try:
            tornado.ioloop.IOLoop.current().add_future("not a future", count_callback)
        except AssertionError:
            self.write("caught")
        else:
            self.write("not raised")


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({"events": len(EVENTS), **COUNTS})


class Orders(tornado.web.RequestHandler):
    def get(self):
        self.write({"order": ORDER, "removed": REMOVED})


def make_app():
    return tornado.web.Application([
        (r"/ping", Ping), (r"/sync/(\w+)", SyncSchedule), (r"/async/(\w+)", AsyncSchedule),
        (r"/rewrite", Rewrite), (r"/count", Count), (r"/state", State),
        (r"/order/(\d+)", Order), (r"/undo", Undo), (r"/not-a-future", NotAFuture),
        (r"/orders", Orders)])
