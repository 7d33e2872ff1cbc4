"""Constructs documented as weaker than a serial run (docs/semantics.md), one per function."""

from tests.stm import helpers
from tests.stm import limits_plain

OUT = {"copy": None}
D = {"a": 1}


def copy_uninstrumented_state_across_a_pause():
    seen = limits_plain.STATE["x"]
    helpers.pause()
    OUT["copy"] = seen


def grow_while_iterating():
    for key in D:
        D[key + "x"] = 1


def add_member(members, item):
    members.add(item)


class Thing:
    def __init__(self):
        self.value = 1


def read_value(thing):
    return thing.value


# -- item 15: hooks around a coroutine method are sections of their own --------

import tornado.web  # noqa: E402  (only item 15 needs it)

HOOKS = {"n": 0}


class CountingHandler(tornado.web.RequestHandler):
    def prepare(self):
        HOOKS["n"] += 1
        self.mine = HOOKS["n"]

    def get(self):
        self.seen = HOOKS["n"]


class AsyncCountingHandler(CountingHandler):
    async def get(self):
        self.seen = HOOKS["n"]


def another_request_counts():
    HOOKS["n"] += 1


HASH_CALLS = {"n": 0}
TABLE: dict = {}


class CountedKey:
    """A key whose __hash__ (Python code) counts its calls."""

    def __init__(self, i):
        self.i = i

    def __hash__(self):
        HASH_CALLS["n"] += 1
        return hash(self.i)

    def __eq__(self, other):
        return type(other) is CountedKey and other.i == self.i


def look_up_counted(i):
    """One lookup in a shared dict: plain Python hashes the key once."""
    return TABLE.get(CountedKey(i))
