"""Opening a PYPYSTM log: files, pipes and stdin; the header check; the wording of damage.

:func:`open_log` opens a log once per command and checks its header once:
the :class:`LogInput` it returns stands just after the header, and every
reader of the log (the numpy reader, the C pass, the numbering guess)
reads through it. Regular files are read with plain reads and can be
rewound for a second pass. Pipes, FIFOs, sockets and stdin (``-``) are
read as streams: their size is unknown, and a second pass is possible only
when asked for beforehand (:meth:`LogInput.keep`), by spooling what is read
into a temporary file (in memory while it is small).

A FIFO is opened without blocking: while no writer has it open we wait up
to ``wait`` seconds for one, then fail with one line instead of hanging.

Numpy-free on purpose: the C path of ``stmlog report`` needs nothing more,
and starts faster without it. :class:`LogError` names the file, the byte
offset and the problem; ``str()`` of it is the one line the CLI prints.
The ``*_problem`` helpers word the damage the reader and the C pass find,
so both say the same thing.
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from collections.abc import Callable

from stmlog_tools.format import C7_HEADER, C7_RECORD, C8_HEADER, C8_RECORD, HEADER_SIZE

#: (bytes done, bytes total); total is 0 when unknown (a stream).
ProgressCallback = Callable[[int, int], None]

#: Size of the fixed part of a record, per format.
RECORD_SIZES = {"c7": C7_RECORD.size, "c8": C8_RECORD.size}

#: The name stdin goes by in messages.
STDIN_NAME = "<stdin>"

#: Seconds :func:`open_log` waits for a writer to open a FIFO, by default.
DEFAULT_FIFO_WAIT = 10.0

#: A stream spooled for a second pass stays in memory up to this size.
_SPOOL_IN_MEMORY = 16 << 20

_POLL_SECONDS = 0.05


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


def empty_log_error(path: str, truncated: int = 0) -> LogError:
    """No complete record after the header (``truncated``: bytes of an incomplete one)."""
    if truncated:
        return LogError(path, HEADER_SIZE, f"empty log: only a truncated record ({truncated} "
                                           f"bytes) after the header")
    return LogError(path, HEADER_SIZE, "empty log: no complete event after the header")


class LogInput:
    """An open log, its header checked, positioned at its first record.

    ``format`` is "c7" or "c8"; ``size`` the file size, or None for a
    stream; ``position`` the offset in the log of the next byte
    :meth:`read` returns. Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: str, fd: int, fmt: str, size: int | None, owns_fd: bool,
                 base: int = 0) -> None:
        self.path = path
        self.format = fmt
        self.size = size
        self.start = HEADER_SIZE           # where the first record is
        self.position = HEADER_SIZE
        self._base = base                  # file offset of the header (stdin may be mid-file)
        self._fd = fd
        self._owns_fd = owns_fd
        self._spool: tempfile.SpooledTemporaryFile[bytes] | None = None
        self._spooled = 0                  # bytes in the spool (from ``start`` on)
        self._keeping = False

    @property
    def seekable(self) -> bool:
        return self.size is not None

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes; fewer only at the end of the log."""
        parts: list[bytes] = []
        while n > 0:
            block = self._read_some(n)
            if not block:
                break
            parts.append(block)
            n -= len(block)
        return b"".join(parts)

    def _read_some(self, n: int) -> bytes:
        """What one read gives: replayed from the spool, else from the descriptor."""
        if self._spool is not None:
            done = self.position - self.start
            if done < self._spooled:        # replay what was kept
                self._spool.seek(done)
                block = self._spool.read(min(n, self._spooled - done))
                self.position += len(block)
                return block
            if not self._keeping:           # replayed in full and not wanted again
                self._spool.close()
                self._spool = None
        try:
            block = os.read(self._fd, n)
        except OSError as exc:
            raise LogError(self.path, self.position, f"cannot read: {exc.strerror or exc}") \
                from None
        if block and self._keeping and self._spool is not None:
            self._spool.seek(self._spooled)
            self._spool.write(block)
            self._spooled += len(block)
        self.position += len(block)
        return block

    def keep(self) -> None:
        """Announce a second pass: a stream spools what is read from here on (the start)."""
        if self.seekable:
            return
        if self.position != self.start:
            raise RuntimeError("LogInput.keep() must be called at the first record")
        if self._spool is None:
            self._spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY)
            self._spooled = 0
        self._keeping = True

    def rewind(self) -> None:
        """Back to the first record (a stream replays what it kept, then stops keeping)."""
        if self.position == self.start:
            return
        if self.seekable:
            os.lseek(self._fd, self._base + self.start, os.SEEK_SET)
        elif self._spool is None or not self._keeping:
            raise RuntimeError(f"{self.path}: a stream is read twice only after keep()")
        self._keeping = False
        self.position = self.start

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()
            self._spool = None
        if self._owns_fd and self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        self._owns_fd = False

    def __del__(self) -> None:
        self.close()

    def __enter__(self) -> LogInput:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _open_fd(path: str, wait: float) -> tuple[int, bool, bytes]:
    """A blocking read descriptor for ``path`` (``-``: stdin), whether we own it, and the
    first bytes already read from it (a FIFO's, while finding out whether it has a writer)."""
    if path == "-":
        fd = 0   # the descriptor, whatever sys.stdin has become
        try:
            os.fstat(fd)
        except OSError:
            raise LogError(STDIN_NAME, None, "no standard input (it is closed)") from None
        if os.isatty(fd):
            raise LogError(STDIN_NAME, None, "standard input is a terminal: pipe a log into "
                                             "it (stmlog report - < run.log)")
        return fd, False, b""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError
        if not stat.S_ISFIFO(mode):
            return os.open(path, os.O_RDONLY), True, b""
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)   # a blocking open waits for a writer
    except FileNotFoundError:
        raise LogError(path, None, "no such file") from None
    except IsADirectoryError:
        raise LogError(path, None, "is a directory, not a log file") from None
    except PermissionError:
        raise LogError(path, None, "permission denied") from None
    except OSError as exc:
        raise LogError(path, None, f"cannot read: {exc.strerror or exc}") from None
    try:
        first = _wait_for_writer(path, fd, wait)
    except BaseException:
        os.close(fd)
        raise
    return fd, True, first


def _wait_for_writer(path: str, fd: int, wait: float) -> bytes:
    """Wait, at most ``wait`` seconds, until a writer has the FIFO ``fd`` open.

    A non-blocking read tells: data (returned), or EAGAIN (a writer, no
    data yet), or b"" (no writer). Then the descriptor is made blocking.
    A writer that opened and closed without writing counts as none.
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            first = os.read(fd, HEADER_SIZE)
        except BlockingIOError:
            first = b""
            break
        if first:
            break
        if time.monotonic() >= deadline:
            raise LogError(path, None, f"FIFO without a writer: nothing opened it for writing "
                                       f"within {wait:g} s (see --wait)")
        time.sleep(_POLL_SECONDS)
    os.set_blocking(fd, True)
    return first


def _read_header(fd: int, first: bytes) -> bytes:
    """The first HEADER_SIZE bytes (fewer at the end of the input), ``first`` included."""
    header = first
    while len(header) < HEADER_SIZE:
        block = os.read(fd, HEADER_SIZE - len(header))
        if not block:
            break
        header += block
    return header


def _header_format(path: str, header: bytes, size: int | None) -> str:
    """"c7" or "c8" from the header, or a LogError saying what is wrong."""
    what = "file" if size is not None else "input"
    if not header:
        raise LogError(path, 0, f"empty {what} (0 bytes): expected a 16-byte PYPYSTM header")
    if header == C8_HEADER:
        return "c8"
    if header == C7_HEADER:
        return "c7"
    if len(header) < HEADER_SIZE:
        raise LogError(path, 0, f"{what} too short ({len(header)} bytes) for a 16-byte "
                                f"PYPYSTM header")
    raise LogError(path, 0, f"not a PYPYSTM log: header {header!r} is neither "
                            f"{C8_HEADER!r} nor {C7_HEADER!r}")


def open_log(path: str, wait: float = DEFAULT_FIFO_WAIT) -> LogInput:
    """Open the log at ``path`` (``-``: stdin) and check its header, once.

    ``wait``: seconds to wait for a writer when ``path`` is a FIFO. Raises
    :class:`LogError` for anything that is not a readable PYPYSTM log.
    """
    fd, owns_fd, first = _open_fd(path, wait)
    name = STDIN_NAME if path == "-" else path
    try:
        info = os.fstat(fd)
        regular = stat.S_ISREG(info.st_mode)
        start = os.lseek(fd, 0, os.SEEK_CUR) if regular else 0   # stdin may be mid-file
        try:
            header = _read_header(fd, first)
        except OSError as exc:
            raise LogError(name, None, f"cannot read: {exc.strerror or exc}") from None
        size = info.st_size - start if regular else None
        fmt = _header_format(name, header, size)
        if size is not None and size < HEADER_SIZE + RECORD_SIZES[fmt]:
            raise empty_log_error(name, size - HEADER_SIZE)
    except BaseException:
        if owns_fd:
            os.close(fd)
        raise
    return LogInput(name, fd, fmt, size, owns_fd, base=start)
