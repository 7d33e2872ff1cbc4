"""The PYPYSTM log of our runtime.

With ``PYPYSTM=<file>`` in the environment (as PyPy-STM read it) the
engine writes C8 records in the final numbering through
``stmlog_tools.writer.LogWriter``; a trailing ``+`` makes forked
children write ``<file>.fork<PID>`` too. Thread numbers are those of
``tornado_stm.stm.stats`` (1, 2, 3... in order of first section).

Markers use PyPy's text, ``File "<path>", line <n>, in <func>``, and name
the first frame of application code (frames of this package are skipped).
The log is flushed and closed at exit and by :func:`flush_log`.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from types import FrameType
from typing import Optional

from stmlog_tools.writer import (
    STM_BECOME_INEVITABLE, STM_CONTENTION_WRITE_READ, STM_TRANSACTION_ABORT,
    STM_TRANSACTION_COMMIT, STM_TRANSACTION_START, STM_WAIT_DONE, STM_WAIT_OTHER_INEVITABLE,
    LogWriter, fork_log_path, make_marker, writer_from_environment,
)

__all__ = [
    "STM_BECOME_INEVITABLE", "STM_CONTENTION_WRITE_READ", "STM_TRANSACTION_ABORT",
    "STM_TRANSACTION_COMMIT", "STM_TRANSACTION_START", "STM_WAIT_DONE",
    "STM_WAIT_OTHER_INEVITABLE", "enabled", "record", "user_marker", "flush_log",
    "open_log",
]

_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_lock = threading.Lock()
_writer: Optional[LogWriter] = None
_follow_forks = False
_path: Optional[str] = None


def enabled() -> bool:
    """True when a log is being written (barriers then capture markers)."""
    return _writer is not None


def record(event: int, thread_num: int, marker: bytes = b"") -> None:
    writer = _writer
    if writer is not None:
        writer.write(event, thread_num, marker)


def user_marker(frame: Optional[FrameType] = None) -> bytes:
    """The marker of the innermost frame that is not tornado-stm's own code."""
    frame = frame or sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_ENGINE_DIR):
        frame = frame.f_back
    if frame is None:
        return b""
    return make_marker(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def open_log(path: Optional[str] = None, follow_forks: bool = False) -> None:
    """Start writing a log to ``path`` (tests and tools; normally set by ``$PYPYSTM``)."""
    global _writer, _follow_forks, _path
    with _lock:
        if _writer is not None:
            _writer.close()
        if path is None:
            _writer, _follow_forks = writer_from_environment()
            value = os.environ.get("PYPYSTM", "")
            _path = value[:-1] if value.endswith("+") else (value or None)
        else:
            _writer, _follow_forks, _path = LogWriter(path), follow_forks, path


def flush_log() -> None:
    """Flush the log to disk (the server calls this at shutdown)."""
    writer = _writer
    if writer is not None:
        writer.flush()


def close_log() -> None:
    global _writer
    with _lock:
        if _writer is not None:
            _writer.close()
            _writer = None


def _after_fork_in_child() -> None:
    global _writer
    # The parent's writer (its file object and lock) must not be shared.
    # Children often end with os._exit(), which skips atexit: their log is
    # written unbuffered so that no record is lost.
    _writer = None
    if _follow_forks and _path:
        _writer = LogWriter(open(fork_log_path(_path), "wb", buffering=0))


open_log()
atexit.register(close_log)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
