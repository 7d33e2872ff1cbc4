"""Sections with side effects: writes then conflicts, exceptions, files."""

import json

from tests.stm import helpers

SHARED = {"value": 0, "other": 0}
LOG_PATH = None


class AppError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.detail = message


class Plain:
    def __init__(self) -> None:
        super().__init__()
        self.ready = True


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


def dumps_private(count: int) -> str:
    """json.dumps of a structure this section built: no need to become inevitable."""
    result = {"values": [index for index in range(count)], "name": "private"}
    return json.dumps(result)


def dumps_private_grid(size: int) -> str:
    """json.dumps of a grid this section built, more numbers than the walk's budget."""
    grid = [[(x + y) % 3 for x in range(size)] for y in range(size)]
    return json.dumps({"grid": grid, "rows": {str(y): list(row) for y, row in enumerate(grid)}})


def dumps_rows_with_a_shared_one() -> str:
    """A private list whose rows are private lists of numbers, and one shared dict."""
    return json.dumps([[1, 2], [3, 4], SHARED, [5]])


def dumps_shared() -> str:
    """json.dumps of shared state reads deeply: the section becomes inevitable."""
    return json.dumps({"shared": SHARED})


def raise_http_error() -> None:
    import tornado.web
    raise tornado.web.HTTPError(404)


def build_plain() -> bool:
    return Plain().ready
