"""Long polling: a request waits; another request (maybe on another loop) finishes it for it.

Served by ``tests/loop/test_cross_loop.py``: the post finishes handlers
whose connections other loops own, and sets their ``tornado.locks.Event``.
"""
import tornado.locks
import tornado.web

WAITERS = set()
STATE = {"posted": 0, "delivered": 0, "polls": 0, "woken": 0}


class Poll(tornado.web.RequestHandler):
    async def get(self):
        STATE["polls"] += 1
        self.woken = tornado.locks.Event()
        WAITERS.add(self)
        await self.woken.wait()
        STATE["woken"] += 1


class Post(tornado.web.RequestHandler):
    def post(self):
        msg = self.get_argument("m")
        STATE["posted"] += 1
        for w in list(WAITERS):
            w.finish({"m": msg, "n": STATE["posted"]})
            w.woken.set()
            STATE["delivered"] += 1
        WAITERS.clear()
        self.write("ok")


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({**STATE, "waiting": len(WAITERS)})


def make_app():
    return tornado.web.Application([(r"/poll", Poll), (r"/post", Post), (r"/state", State)])
