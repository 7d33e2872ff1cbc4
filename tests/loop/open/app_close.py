"""on_connection_close: stock Tornado never runs it during a synchronous get() of the same request."""
import tornado.gen
import tornado.web

CANCELLED = set()
STATE = {"get_start": 0, "get_done": 0, "saw_own_cancel": 0, "closed": 0, "async_done": 0,
         "async_after_close": 0, "finished": 0}


def spin(n):
    x = 0
    for i in range(n):
        x += i * i % 7
    return x


class Slow(tornado.web.RequestHandler):
    def get(self):
        rid = self.get_argument("id")
        STATE["get_start"] += 1
        spin(int(self.get_argument("n", "20000")))
        if rid in CANCELLED:
            STATE["saw_own_cancel"] += 1
        STATE["get_done"] += 1
        self.write("done " + rid)

    def on_connection_close(self):
        CANCELLED.add(self.get_argument("id"))
        STATE["closed"] += 1

    def on_finish(self):
        STATE["finished"] += 1


class SlowAsync(tornado.web.RequestHandler):
    async def get(self):
        rid = self.get_argument("id")
        await tornado.gen.sleep(0.02)
        STATE["async_done"] += 1
        if rid in CANCELLED:
            STATE["async_after_close"] += 1
        self.write("done")

    def on_connection_close(self):
        CANCELLED.add(self.get_argument("id"))
        STATE["closed"] += 1

    def on_finish(self):
        STATE["finished"] += 1


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({**STATE, "cancelled": len(CANCELLED)})


def make_app():
    return tornado.web.Application([(r"/slow", Slow), (r"/aslow", SlowAsync), (r"/state", State)])
