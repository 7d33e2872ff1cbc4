"""Server-sent events: ``/post`` writes each message to every open ``/events`` response and flushes it.

The subscribers' streams belong to the loops that accepted them; a post
on any loop writes to all of them. Served by ``tests/loop/test_cross_loop.py``.
"""
import tornado.gen
import tornado.web

SUBS = set()
STATE = {"posted": 0, "writes": 0, "subs": 0}


class Events(tornado.web.RequestHandler):
    async def get(self):
        self.set_header("Content-Type", "text/event-stream")
        self.ended = False
        SUBS.add(self)
        STATE["subs"] += 1
        await self.flush()
        while not self.ended:
            await tornado.gen.sleep(0.01)


class Post(tornado.web.RequestHandler):
    def post(self):
        m = self.get_argument("m")
        STATE["posted"] += 1
        for s in list(SUBS):
            s.write(f"data: {m}\n\n")
            s.flush()
            STATE["writes"] += 1
            if m == "END":
                s.ended = True
                SUBS.discard(s)
        self.write("ok")


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({**STATE, "open": len(SUBS)})


def make_app():
    return tornado.web.Application([(r"/events", Events), (r"/post", Post), (r"/state", State)])
