"""Write PYPYSTM logs, thread-safely, in C8 (any numbering) or C7 format.

The STM runtime writes its log through this module, and tests build logs
with known contents through it. Interface (stable, others rely on it)::

    from stmlog_tools.writer import LogWriter, STM_TRANSACTION_START
    with LogWriter("run.log") as log:              # C8, final numbering
        log.write(STM_TRANSACTION_START, thread_num=1)
        log.write("STM_BECOME_INEVITABLE", 1, marker=b'File "a.py", line 3, in f')

* ``LogWriter(target, fmt="c8", events="final")``: ``target`` is a path
  or a binary file object (left open on ``close()`` if it was given open).
  ``fmt="c7"`` writes the C7 format (for tests: two markers and
  ``other_thread_num`` are then allowed).
* ``write(event, thread_num, marker=b"", timestamp=None, *, marker2=b"",
  other_thread_num=0)``: ``event`` is a number in the writer's numbering or
  an ``STM_*`` name. ``timestamp`` is ``None`` (the monotonic clock, read
  under the writer's lock so the file is strictly time-ordered), a float of
  seconds, or an exact ``(sec, nsec)`` pair. Seconds are cut to uint32 as
  stmgc did. Markers are ``bytes`` or ``str`` and are cut to the format's
  limit (159 bytes in C8, 127 in C7). In C8 a timestamp earlier than the
  previous record's raises ``ValueError``: such a file would be damaged.
* ``flush()``, ``close()``, and use as a context manager.
* :func:`writer_from_environment` opens the file named by ``$PYPYSTM``
  (with PyPy's trailing ``+`` meaning "forked children log too", which the
  caller handles with :func:`fork_log_path`).

Records go through one lock: the writer may be shared by many threads.
The module also re-exports the final C8 event numbers (``STM_*``).
"""

from __future__ import annotations

import os
import threading
import time
from typing import BinaryIO

from stmlog_tools.format import (  # noqa: F401  (STM_* re-exported for the runtime)
    C7_HEADER, C7_MAX_MARKER, C7_RECORD, C8_HEADER, C8_MAX_MARKER, C8_RECORD,
    STM_BECOME_INEVITABLE, STM_CONTENTION_WRITE_READ, STM_GC_MAJOR_DONE,
    STM_GC_MAJOR_START, STM_GC_MINOR_DONE, STM_GC_MINOR_START, STM_TRANSACTION_ABORT,
    STM_TRANSACTION_COMMIT, STM_TRANSACTION_DETACH, STM_TRANSACTION_REATTACH,
    STM_TRANSACTION_START, STM_WAIT_DONE, STM_WAIT_FREE_SEGMENT, STM_WAIT_OTHER_INEVITABLE,
    STM_WAIT_SYNC_PAUSE, STM_WAIT_SYNCING, make_marker, table_for,
)

Timestamp = float | tuple[int, int] | None

_UINT32 = 0xFFFFFFFF


def split_timestamp(timestamp: float | tuple[int, int]) -> tuple[int, int]:
    """``(sec, nsec)`` of a float of seconds or of an exact pair, sec cut to uint32."""
    if isinstance(timestamp, tuple):
        sec, nsec = timestamp
    else:
        total_ns = round(timestamp * 1_000_000_000)
        sec, nsec = divmod(total_ns, 1_000_000_000)
    if not 0 <= nsec < 1_000_000_000:
        raise ValueError(f"nanoseconds {nsec} out of range 0..999999999")
    return sec & _UINT32, nsec


def _monotonic_now() -> tuple[int, int]:
    sec, nsec = divmod(time.monotonic_ns(), 1_000_000_000)
    return sec & _UINT32, nsec


def _marker_bytes(marker: bytes | str, limit: int) -> bytes:
    data = marker.encode("utf-8", "replace") if isinstance(marker, str) else bytes(marker)
    return data[:limit]


class LogWriter:
    """A PYPYSTM log being written; see the module docstring."""

    def __init__(self, target: str | os.PathLike[str] | BinaryIO, fmt: str = "c8",
                 events: str = "final") -> None:
        self.format = fmt
        self.table = table_for(fmt, events)
        self._lock = threading.Lock()
        self._last = (-1, 0)  # (sec, nsec) of the previous record, for the C8 order check
        if isinstance(target, (str, os.PathLike)):
            self.path: str | None = os.fspath(target)
            self._file: BinaryIO = open(self.path, "wb")  # noqa: SIM115 (closed in close())
            self._owns_file = True
        else:
            self.path = getattr(target, "name", None)
            self._file = target
            self._owns_file = False
        self._file.write(C7_HEADER if fmt == "c7" else C8_HEADER)

    def write(self, event: int | str, thread_num: int, marker: bytes | str = b"",
              timestamp: Timestamp = None, *, marker2: bytes | str = b"",
              other_thread_num: int = 0) -> None:
        """Append one record (see the module docstring for the arguments)."""
        number = self.table.number(event)
        if self.format == "c7":
            m1 = _marker_bytes(marker, C7_MAX_MARKER)
            m2 = _marker_bytes(marker2, C7_MAX_MARKER)
        else:
            if marker2 or other_thread_num:
                raise ValueError("C8 records carry one marker and no other_thread_num")
            m1 = _marker_bytes(marker, C8_MAX_MARKER)
        given = None if timestamp is None else split_timestamp(timestamp)
        with self._lock:
            sec, nsec = given if given is not None else _monotonic_now()
            if self.format == "c7":
                record = C7_RECORD.pack(sec, nsec, thread_num, other_thread_num, number,
                                        len(m1), len(m2)) + m1 + m2
            else:
                if given is not None and (sec, nsec) < self._last:
                    raise ValueError(f"timestamp {sec}.{nsec:09d} is earlier than the previous "
                                     f"record's {self._last[0]}.{self._last[1]:09d}")
                self._last = (sec, nsec)
                record = C8_RECORD.pack(sec, nsec, thread_num, number, len(m1)) + m1
            self._file.write(record)

    def flush(self) -> None:
        with self._lock:
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._file.closed:
                return
            self._file.flush()
            if self._owns_file:
                self._file.close()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def fork_log_path(path: str, pid: int | None = None) -> str:
    """The log file of a forked child, ``<path>.fork<PID>``, as PyPy-STM named it."""
    return f"{path}.fork{os.getpid() if pid is None else pid}"


def writer_from_environment(variable: str = "PYPYSTM") -> tuple[LogWriter | None, bool]:
    """A C8 writer on the file named by ``$PYPYSTM`` and whether forks should log too.

    Returns ``(None, False)`` when the variable is unset or empty.
    """
    value = os.environ.get(variable, "")
    if not value:
        return None, False
    follow_forks = value.endswith("+")
    path = value[:-1] if follow_forks else value
    return LogWriter(path), follow_forks


__all__ = [
    "LogWriter", "fork_log_path", "make_marker", "split_timestamp", "writer_from_environment",
    *[name for name in dir() if name.startswith("STM_")],
]
