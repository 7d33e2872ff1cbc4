"""A handler from another directory on PYTHONPATH: not the application's project."""

import tornado.web


class OutsideHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write("outside\n")
