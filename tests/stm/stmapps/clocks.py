"""Sections that read a clock, one of them stopping half-way (``helpers.pause``).

They conflict: the second reads what the first wrote before it stopped,
so the first cannot go before it in the serial order once it has
committed (``txn.place_before_later_readers``): it waits for the first."""

import time

from tests.stm import helpers

#: (who, reading) in the order the sections committed.
READINGS: list = []
#: Each section's reading, as soon as it is made.
LATEST: dict = {}


def read_then_pause() -> None:
    now = time.monotonic()
    LATEST["first"] = now
    helpers.pause()
    READINGS.append(("first", now))


def read_and_record() -> None:
    LATEST.get("first")
    READINGS.append(("second", time.monotonic()))
