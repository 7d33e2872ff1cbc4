"""Habits of Tornado applications that touch framework state from handler code.

Each keeps an invariant that stock Tornado on one thread keeps, and each
once broke on the per-thread loops (red-team round 12):

* ``/greet``: a base handler's ``prepare()`` merges a JSON body into
  ``request.arguments`` so that ``get_argument()`` serves JSON clients too
  (Tornado's code read the request's tables in place and missed the
  section's logged changes: 400 "Missing argument").
* ``/work`` with a ``log_function`` keeping metrics: Tornado calls it inside
  ``finish()``, so a later request sees every earlier one both served and
  logged (it ran after the commit, in a section of its own).
* ``/schedule``: ``IOLoop.current()`` kept by the factory, then
  ``call_later`` from handlers that may run on another loop (the timer
  went onto that loop's heap from a foreign thread, unseen until its next
  event).

Round 13 added one:

* ``/cors``: the CORS recipe of Tornado's documentation, a base handler
  whose ``set_default_headers()`` calls ``set_header()``. Tornado calls it
  from ``clear()`` inside the handler's ``__init__``, before the handler
  has a write buffer: the held response's checkpoint failed on it, and
  every request lost its connection.
"""

import json
import time

import tornado.ioloop
import tornado.web

METRICS = {"served": 0, "logged": 0, "mismatch": 0, "current": None}
JOBS = {}


def log_function(handler):
    if handler.request.path != "/work":
        return
    METRICS["logged"] += 1
    if METRICS["current"] != id(handler):
        METRICS["mismatch"] += 1


class JsonArguments(tornado.web.RequestHandler):
    def prepare(self):
        if self.request.headers.get("Content-Type", "").startswith("application/json"):
            for key, value in json.loads(self.request.body).items():
                self.request.arguments.setdefault(key, []).append(str(value).encode())


class Greet(JsonArguments):
    def post(self):
        self.write("hello " + self.get_argument("name"))


class Work(tornado.web.RequestHandler):
    def get(self):
        METRICS["served"] += 1
        METRICS["current"] = id(self)
        self.write({"served": METRICS["served"], "logged": METRICS["logged"]})


def finish_job(name):
    JOBS[name]["late"] = time.monotonic() - JOBS[name]["due"]


class Schedule(tornado.web.RequestHandler):
    def post(self):
        name = self.get_argument("job")
        JOBS[name] = {"due": time.monotonic() + 0.02}
        self.application.settings["factory_loop"].call_later(0.02, finish_job, name)
        self.write("scheduled")


class CorsBase(tornado.web.RequestHandler):
    def set_default_headers(self):
        self.set_header("Access-Control-Allow-Origin", "*")
        self.set_header("Access-Control-Allow-Methods", "GET, OPTIONS")


class Cors(CorsBase):
    def get(self):
        METRICS["served"] += 1
        self.write({"served": METRICS["served"]})

    def options(self):
        self.set_status(204)
        self.finish()


class State(tornado.web.RequestHandler):
    def get(self):
        self.write({"metrics": {k: v for k, v in METRICS.items() if k != "current"},
                    "jobs": dict(JOBS)})


def make_app():
    return tornado.web.Application(
        [(r"/greet", Greet), (r"/work", Work), (r"/schedule", Schedule), (r"/cors", Cors),
         (r"/state", State)],
        log_function=log_function, factory_loop=tornado.ioloop.IOLoop.current())
