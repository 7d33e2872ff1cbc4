"""Opening a PYPYSTM log: the header check, and the errors and warnings about damage.

Numpy-free on purpose: the C path of ``stmlog report`` needs nothing more,
and starts faster without it. :class:`LogError` names the file, the byte
offset and the problem; ``str()`` of it is the one line the CLI prints.
The ``*_problem`` helpers word the damage the reader and the C pass find,
so both say the same thing.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from stmlog_tools.format import C7_HEADER, C7_RECORD, C8_HEADER, C8_RECORD, HEADER_SIZE

ProgressCallback = Callable[[int, int], None]  # (bytes done, bytes total)

#: Size of the fixed part of a record, per format.
RECORD_SIZES = {"c7": C7_RECORD.size, "c8": C8_RECORD.size}


class LogError(Exception):
    """A log that cannot be read: names the file, the byte offset and the problem."""

    def __init__(self, path: str, offset: int | None, problem: str) -> None:
        self.path, self.offset, self.problem = path, offset, problem
        where = f"{path}: " if offset is None else f"{path}: at byte {offset}: "
        super().__init__(where + problem)


def unknown_event_problem(number: int, numbering: str, count: int) -> str:
    return (f"unknown event number {number} (the {numbering} numbering has 0..{count - 1}): "
            f"the file is corrupted")


def long_marker_problem(length: int, limit: int) -> str:
    return f"marker length {length} exceeds the format's {limit}: the file is corrupted"


def decreasing_time_problem(now: float, before: float) -> str:
    return f"decreasing timestamp {now:.9f} after {before:.9f}: the file is damaged"


def truncated_warning(path: str, offset: int, length: int) -> str:
    return f"{path}: at byte {offset}: truncated last record ({length} bytes); it is ignored"


def check_log_file(path: str) -> tuple[int, str]:
    """Size and format ("c7"/"c8") of the log at ``path``, or a LogError saying what is wrong."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            header = f.read(HEADER_SIZE)
    except FileNotFoundError:
        raise LogError(path, None, "no such file") from None
    except IsADirectoryError:
        raise LogError(path, None, "is a directory, not a log file") from None
    except PermissionError:
        raise LogError(path, None, "permission denied") from None
    except OSError as exc:
        raise LogError(path, None, f"cannot read: {exc.strerror or exc}") from None
    if size == 0:
        raise LogError(path, 0, "empty file (0 bytes): expected a 16-byte PYPYSTM header")
    if header == C8_HEADER:
        fmt = "c8"
    elif header == C7_HEADER:
        fmt = "c7"
    elif len(header) < HEADER_SIZE:
        raise LogError(path, 0, f"file too short ({size} bytes) for a 16-byte PYPYSTM header")
    else:
        raise LogError(path, 0, f"not a PYPYSTM log: header {header!r} is neither "
                                f"{C8_HEADER!r} nor {C7_HEADER!r}")
    if size < HEADER_SIZE + RECORD_SIZES[fmt]:
        if size == HEADER_SIZE:
            raise LogError(path, HEADER_SIZE, "empty log: no events after the header")
        raise LogError(path, HEADER_SIZE, "empty log: only a truncated record after the "
                                          "header")
    return size, fmt
