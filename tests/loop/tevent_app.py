"""A ``tornado.locks.Event`` shared by every loop: waiters everywhere, ``set()``/``clear()`` by another request.

Each waiter's future leaves the event's set in a done-callback that runs
on the waiter's own loop, while a pulse on another loop may be iterating
that set. Served by ``tests/loop/test_cross_loop.py``.
"""
import tornado.locks
import tornado.web

EV = tornado.locks.Event()
S = {"woken": 0, "sets": 0, "waits": 0}


class Wait(tornado.web.RequestHandler):
    async def get(self):
        S["waits"] += 1
        await EV.wait()
        S["woken"] += 1
        self.write("w")


class Pulse(tornado.web.RequestHandler):
    def post(self):
        EV.set()
        EV.clear()
        S["sets"] += 1
        self.write("p")


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({**S, "waiters": len(EV._waiters)})


def make_app():
    return tornado.web.Application([(r"/wait", Wait), (r"/pulse", Pulse), (r"/state", State)])
