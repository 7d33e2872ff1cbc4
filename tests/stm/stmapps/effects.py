"""Sections with side effects: writes then conflicts, exceptions, files."""

from tests.stm import helpers

SHARED = {"value": 0, "other": 0}
LOG_PATH = None


class AppError(Exception):
    pass


def write_then_pause(value: int) -> None:
    SHARED["value"] = value
    before = SHARED["other"]
    helpers.pause()
    SHARED["other"] = before + SHARED["value"]


def bump_other() -> None:
    SHARED["other"] += 1


def write_then_fail(value: int) -> None:
    SHARED["value"] = value
    raise AppError(f"failed after writing {value}")


def append_line_then_bump(line: str) -> None:
    SHARED["other"] += 1
    with open(LOG_PATH, "a") as stream:
        stream.write(line + "\n")
    SHARED["value"] += 1
