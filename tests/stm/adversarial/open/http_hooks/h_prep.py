"""prepare() -> get() -> on_finish(): in stock Tornado a sync prepare, a sync get and
on_finish run back to back with no yield to the loop, so no other request can come between."""
import tornado.web

COUNTER = 0
LAST = {"tok": None}
MISMATCH = {"n": 0, "served": 0}


class P(tornado.web.RequestHandler):
    def prepare(self):
        global COUNTER
        COUNTER += 1
        self.mine = COUNTER

    def get(self):
        self.write({"mine": self.mine, "now": COUNTER})


class F(tornado.web.RequestHandler):
    def get(self):
        self.tok = self.get_argument("t")
        LAST["tok"] = self.tok
        self.write("ok")

    def on_finish(self):
        MISMATCH["served"] += 1
        if LAST["tok"] != self.tok:
            MISMATCH["n"] += 1


LASTE = {"tok": None}


class E(tornado.web.RequestHandler):
    def get(self):
        LASTE["tok"] = self.get_argument("t")
        raise tornado.web.HTTPError(400)

    def write_error(self, status_code, **kw):
        self.finish({"tok": LASTE["tok"]})


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({"counter": COUNTER, "mismatch": MISMATCH})


def make_app():
    return tornado.web.Application([(r"/p", P), (r"/f", F), (r"/e", E), (r"/state", State)])
