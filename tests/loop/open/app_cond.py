"""Minimal: producer/consumer on a module-level asyncio.Condition (its own Lock).

Serial invariant: whoever runs between `async with COND` and its end holds the
condition's lock alone, so `inside` is 1 for each holder (violations 0),
items never goes below 0, and consumed == produced once the load is done.
"""
import asyncio

import tornado.web

COND = asyncio.Condition()
BOX = {"items": 0, "inside": 0, "violations": 0, "consumed": 0, "produced": 0, "negative": 0}


def enter():
    BOX["inside"] += 1
    if BOX["inside"] != 1:
        BOX["violations"] += 1


class Consume(tornado.web.RequestHandler):
    async def get(self):
        async with COND:
            enter()
            while BOX["items"] == 0:
                BOX["inside"] -= 1
                await COND.wait()
                enter()
            BOX["items"] -= 1
            if BOX["items"] < 0:
                BOX["negative"] += 1
            BOX["consumed"] += 1
            BOX["inside"] -= 1
        self.write("ok")


class Produce(tornado.web.RequestHandler):
    async def post(self):
        async with COND:
            enter()
            BOX["items"] += 1
            BOX["produced"] += 1
            COND.notify_all()
            BOX["inside"] -= 1
        self.write("ok")


class State(tornado.web.RequestHandler):
    def get(self):
        self.write(dict(BOX))


def make_app():
    return tornado.web.Application([(r"/consume", Consume), (r"/produce", Produce),
                                    (r"/state", State)])
