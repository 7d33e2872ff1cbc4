"""Handlers whose hooks share state: stock Tornado runs a request's synchronous
hooks (``prepare``, the method, ``write_error``, ``on_finish``) back to back,
so no other request's code comes between them.

* ``/count``: ``prepare`` bumps a counter and keeps its value; ``get`` answers
  both that value and the counter as it reads it: equal in every serial run.
* ``/token``: ``get`` stores the request's token in a shared slot and
  ``on_finish`` counts the requests that found another token there.
* ``/fail``: ``get`` stores the token, then raises ``HTTPError(400)``;
  ``write_error`` answers the token it finds in the slot.
* ``/form`` (POST): the number of values of the body argument ``x``, parsed by
  Tornado before ``prepare``: one, however often the section ran.
* ``/auth``: ``@tornado.web.authenticated``'s ``get_current_user`` stores the
  request's token in a shared slot; ``get`` answers the user and the slot:
  equal in every serial run (the decorator is Tornado's code, between them).
* ``/badlength``: promises 42 bytes and sends 2; the connection refuses it
  only when the section's held response is sent, after the commit.
"""

import tornado.web

COUNTER = {"n": 0}
SLOT = {"token": None, "failed": None}
SEEN = {"served": 0, "interleaved": 0}


class Count(tornado.web.RequestHandler):
    def prepare(self):
        COUNTER["n"] += 1
        self.mine = COUNTER["n"]

    def get(self):
        self.write({"mine": self.mine, "now": COUNTER["n"]})


class Token(tornado.web.RequestHandler):
    def get(self):
        self.token = self.get_argument("t")
        SLOT["token"] = self.token
        self.write("ok")

    def on_finish(self):
        SEEN["served"] += 1
        if SLOT["token"] != self.token:
            SEEN["interleaved"] += 1


class Fail(tornado.web.RequestHandler):
    def get(self):
        SLOT["failed"] = self.get_argument("t")
        raise tornado.web.HTTPError(400)

    def write_error(self, status_code, **kwargs):
        self.finish({"token": SLOT["failed"]})


class Form(tornado.web.RequestHandler):
    def prepare(self):
        COUNTER["n"] += 1

    def post(self):
        self.write({"x": self.get_body_arguments("x"), "all": self.get_arguments("x")})


class Auth(tornado.web.RequestHandler):
    def get_current_user(self):
        SLOT["user"] = self.get_argument("t")
        return SLOT["user"]

    @tornado.web.authenticated
    def get(self):
        self.write({"user": self.current_user, "slot": SLOT["user"]})


class BadLength(tornado.web.RequestHandler):
    def get(self):
        self.set_header("Content-Length", "42")
        self.finish("ok")


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({"counter": COUNTER["n"], **SEEN})


def make_app():
    return tornado.web.Application([(r"/count", Count), (r"/token", Token), (r"/fail", Fail),
                                    (r"/form", Form), (r"/auth", Auth),
                                    (r"/badlength", BadLength), (r"/state", State)],
                                   login_url="/login")
