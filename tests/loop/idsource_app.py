"""Handlers taking ids from a generator kept in a global, open when the server stops."""

import tornado.web


def _ids():
    n = 0
    while True:
        n += 1
        yield n


IDS = _ids()


class NextId(tornado.web.RequestHandler):
    def get(self):
        self.write({"id": next(IDS)})


def make_app():
    return tornado.web.Application([(r"/id", NextId)])
