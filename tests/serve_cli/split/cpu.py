"""Handlers imported by ``server``: a different module, not a package of it."""

import tornado.web

from outside import OutsideHandler


class SumHandler(tornado.web.RequestHandler):
    def get(self, n: str) -> None:
        self.write({"sum": sum(range(int(n) + 1))})


def make_app() -> tornado.web.Application:
    return tornado.web.Application([(r"/sum/(\d+)", SumHandler),
                                    (r"/outside", OutsideHandler),
                                    (r"/static/(.*)", tornado.web.StaticFileHandler,
                                     {"path": "."})])
