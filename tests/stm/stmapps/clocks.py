"""Sections that read a clock, one of them stopping half-way (``helpers.pause``)."""

import time

from tests.stm import helpers

#: (who, reading) in the order the sections committed.
READINGS: list = []


def read_then_pause() -> None:
    now = time.monotonic()
    helpers.pause()
    READINGS.append(("first", now))


def read_and_record() -> None:
    READINGS.append(("second", time.monotonic()))
