"""The PYPYSTM log of our runtime.

With ``PYPYSTM=<file>`` in the environment (as PyPy-STM read it) the
engine writes C8 records in the final numbering through
``stmlog_tools.writer.LogWriter``; a trailing ``+`` makes forked
children write ``<file>.fork<PID>`` too. Thread numbers are those of
``tornado_stm.stm.stats`` (1, 2, 3... in order of first section).

Markers use PyPy's text, ``File "<path>", line <n>, in <func>``, and name
the first frame of application code (frames of this package are skipped).
The log is flushed and closed at exit and by :func:`flush_log`.

The file is never opened at import. A command that is about to run
transactions calls :func:`configure` (``tornado-stm exec`` and ``serve``
do, with their ``--log FILE`` and ``--force``); ``transaction.run()`` and
the transactional event loop call :func:`open_from_environment`, so that a
program using them directly still logs with ``PYPYSTM`` set. An existing
non-empty file is never overwritten unless ``force`` is given: the log
then goes to the first free numbered name (``run.log`` -> ``run.1.log``,
``run.2.log``...). A path that cannot be written raises
:class:`LogPathError`, whose message is one line naming the path and the
problem.
"""

from __future__ import annotations

import atexit
import errno
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
from tornado_stm.stm.registry import is_engine_code

__all__ = [
    "STM_BECOME_INEVITABLE", "STM_CONTENTION_WRITE_READ", "STM_TRANSACTION_ABORT",
    "STM_TRANSACTION_COMMIT", "STM_TRANSACTION_START", "STM_WAIT_DONE",
    "STM_WAIT_OTHER_INEVITABLE", "enabled", "record", "user_marker", "flush_log",
    "open_log", "configure", "open_from_environment", "LogPathError", "current_path",
]

_lock = threading.Lock()
_writer: Optional[LogWriter] = None
_follow_forks = False
_path: Optional[str] = None
_file = None  # the file object we opened for _writer, closed with it
_configured = False  # configure() or open_from_environment() has run


class LogPathError(Exception):
    """The log file cannot be written; the message is one line naming path and problem."""


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
    while frame is not None and is_engine_code(frame.f_code):
        frame = frame.f_back
    if frame is None:
        return b""
    return make_marker(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def open_log(path: Optional[str] = None, follow_forks: bool = False) -> None:
    """Start writing a log to ``path``, overwriting it (tests and tools).

    Without ``path``, as ``$PYPYSTM`` says, overwriting too: commands use
    :func:`configure`, which never overwrites unless asked.
    """
    global _writer, _follow_forks, _path, _configured
    with _lock:
        _close_locked()
        _configured = True
        if path is None:
            _writer, _follow_forks = writer_from_environment()
            value = os.environ.get("PYPYSTM", "")
            _path = value[:-1] if value.endswith("+") else (value or None)
        else:
            _writer, _follow_forks, _path = LogWriter(path), follow_forks, path
        if _writer is not None:
            _install_exit_hooks_locked()


def configure(path: Optional[str] = None, *, force: bool = False) -> Optional[tuple[str, str]]:
    """Open the log before running transactions; ``(requested, written)`` paths, or None.

    ``path`` is a file name with PyPy's optional trailing ``+`` (forked
    children log to ``<file>.fork<PID>`` too); None means ``$PYPYSTM``
    (no log when unset or empty). An existing non-empty file is kept and
    the log written to the first free numbered name instead, unless
    ``force``. Raises :class:`LogPathError` when the file cannot be written.
    """
    global _writer, _follow_forks, _path, _file, _configured
    value = os.environ.get("PYPYSTM", "") if path is None else path
    with _lock:
        _close_locked()
        _configured = True
        if not value:
            return None
        follow_forks = value.endswith("+")
        requested = value[:-1] if follow_forks else value
        target = _writable_target(requested, force)
        try:
            stream = open(target, "wb" if force or target == requested else "xb")
        except OSError as exc:
            raise LogPathError(_problem(target, exc)) from None
        _file = stream
        _writer, _follow_forks, _path = LogWriter(stream), follow_forks, target
        _install_exit_hooks_locked()
        return requested, target


def open_from_environment() -> None:
    """Open the log ``$PYPYSTM`` names, unless a log was configured already.

    For programs that run transactions without the ``tornado-stm``
    command (``transaction.run()``, the event loop); never overwrites.
    """
    if _configured:
        return
    result = configure()
    if result is not None and result[0] != result[1]:
        print(f"tornado-stm: PYPYSTM log {result[0]} exists and is not empty: "
              f"writing the log to {result[1]}", file=sys.stderr)


def current_path() -> Optional[str]:
    """The file the log is being written to, or None."""
    return _path if _writer is not None else None


def _writable_target(requested: str, force: bool) -> str:
    """``requested``, or the first free numbered name when it holds data; checks the path."""
    directory = os.path.dirname(os.path.abspath(requested))
    if not os.path.isdir(directory):
        what = "not a directory" if os.path.exists(directory) else "no such directory"
        raise LogPathError(f"PYPYSTM log {requested}: {what}: {directory}")
    if os.path.isdir(requested):
        raise LogPathError(f"PYPYSTM log {requested}: is a directory")
    if force or not _holds_data(requested):
        return requested
    stem, ext = os.path.splitext(requested)
    number = 1
    while True:
        candidate = f"{stem}.{number}{ext}"
        if not os.path.lexists(candidate):
            return candidate
        number += 1


def _holds_data(path: str) -> bool:
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return False


def _problem(path: str, exc: OSError) -> str:
    reason = {errno.EACCES: "permission denied", errno.EPERM: "permission denied",
              errno.EISDIR: "is a directory", errno.ENOENT: "no such directory",
              errno.EEXIST: "appeared meanwhile; not overwritten"}.get(exc.errno)
    return f"PYPYSTM log {path}: {reason or exc.strerror or exc}"


def flush_log() -> None:
    """Flush the log to disk (the server calls this at shutdown)."""
    writer = _writer
    if writer is not None:
        writer.flush()


def close_log() -> None:
    with _lock:
        _close_locked()


def _close_locked() -> None:
    global _writer, _file
    if _writer is not None:
        _writer.close()
        _writer = None
    if _file is not None:
        _file.close()
        _file = None


def _after_fork_in_child() -> None:
    global _writer, _file
    # The parent's writer (its file object and lock) must not be shared.
    # Children often end with os._exit(), which skips atexit: their log is
    # written unbuffered so that no record is lost.
    _writer = None
    _file = None
    if _follow_forks and _path:
        _writer = LogWriter(open(fork_log_path(_path), "wb", buffering=0))


_exit_hooks_installed = False


def _install_exit_hooks_locked() -> None:
    """Close the log at exit and reopen it in forked children: once, when a log first opens."""
    global _exit_hooks_installed
    if _exit_hooks_installed:
        return
    _exit_hooks_installed = True
    atexit.register(close_log)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
