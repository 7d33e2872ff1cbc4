"""The application ``make run`` serves: every demo app under one Tornado Application."""

import tornado.web


class HelloHandler(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write("Hello from tornado-stm\n")


def make_app() -> tornado.web.Application:
    return tornado.web.Application([(r"/", HelloHandler)])
