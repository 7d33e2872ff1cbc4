"""Sections reading a clock whose commits may take their place before a later reader's.

The first section reads the clock and stops (``helpers.pause``); the second
reads it after, does one of the things below, and commits first. Whether
the first may still commit, before the second in the serial order, depends
on what the second did with what the first writes.
"""

import time

from tests.stm import helpers
from tornado_stm import stm


class Board:
    """Two players' last readings, and a note either may read."""

    def __init__(self) -> None:
        self.first = None
        self.second = None
        self.note = 0


BOARD = Board()


def reset() -> None:
    BOARD.first = BOARD.second = None
    BOARD.note = 0


def first_writes_its_own() -> None:
    now = time.monotonic()
    helpers.pause()
    BOARD.first = now


def first_reads_the_seconds_after_the_pause() -> None:
    now = time.monotonic()
    helpers.pause()
    BOARD.first = (now, BOARD.second)


def second_writes_its_own() -> None:
    BOARD.second = time.monotonic()


def second_reads_the_firsts() -> None:
    BOARD.second = (time.monotonic(), BOARD.first)


def second_writes_the_firsts() -> None:
    BOARD.first = ("second", time.monotonic())


def second_runs_in_place() -> None:
    stm.become_inevitable("test")
    BOARD.second = time.monotonic()


#: A plain dict both write other (existing) keys of: writes that commute.
SHARED = {"first": 0, "second": 0}


def first_writes_the_attribute_and_a_key(name: str) -> None:
    now = time.monotonic()
    helpers.pause()
    setattr(BOARD, name, now)
    SHARED["first"] = now


def second_writes_the_attribute_and_a_key(name: str) -> None:
    now = time.monotonic()
    setattr(BOARD, name, now)
    SHARED["second"] = now
