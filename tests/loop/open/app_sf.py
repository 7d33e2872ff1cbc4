"""Minimal single-flight cache: the first request for a key computes it; the
requests that arrive meanwhile await the same (module-level) Future.

Serial behaviour: every request answers 200 with the key upper-cased.
"""
import asyncio

import tornado.concurrent
import tornado.web

CACHE = {}
INFLIGHT = {}


class Get(tornado.web.RequestHandler):
    async def get(self):
        k = self.get_argument("k")
        if k in CACHE:
            self.write(CACHE[k])
            return
        fut = INFLIGHT.get(k)
        if fut is None:
            fut = INFLIGHT[k] = tornado.concurrent.Future()
            await asyncio.sleep(0.02)                 # the slow computation
            CACHE[k] = k.upper()
            del INFLIGHT[k]
            fut.set_result(CACHE[k])
        self.write(await fut)


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({"cached": len(CACHE), "inflight": len(INFLIGHT)})


def make_app():
    return tornado.web.Application([(r"/get", Get), (r"/state", State)])
