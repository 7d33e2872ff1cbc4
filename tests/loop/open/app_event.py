"""Minimal: waiters on a module-level asyncio.Event, pulsed (set then clear) by posts.

Serial behaviour: every request answers 200; a waiter wakes at the next pulse.
"""
import asyncio

import tornado.web

EV = asyncio.Event()
S = {"woken": 0, "pulses": 0}


class Wait(tornado.web.RequestHandler):
    async def get(self):
        await EV.wait()
        S["woken"] += 1
        self.write("ok")


class Pulse(tornado.web.RequestHandler):
    def post(self):
        S["pulses"] += 1
        EV.set()
        EV.clear()
        self.write("ok")


class State(tornado.web.RequestHandler):
    def get(self):
        self.write(dict(S))


def make_app():
    return tornado.web.Application([(r"/wait", Wait), (r"/pulse", Pulse), (r"/state", State)])
