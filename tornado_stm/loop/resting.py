"""Running out of descriptors: an I/O callback's fd rests instead of failing every poll.

A listening socket stays readable while ``accept`` fails with EMFILE, so a
loop would call the accept callback again at once, forever, logging a
traceback each time at full CPU. :class:`RestingFds` is a mixin for
selector event loops: when an I/O callback fails with one of
:data:`RESOURCE_ERRNOS` (asyncio's own accept loop backs off on the same
errors), its fd leaves polling for :data:`RESOURCE_RETRY_SECONDS`, and one
line is logged per :data:`RESOURCE_LOG_INTERVAL_SECONDS`.
"""

from __future__ import annotations

import errno
import logging
import math
import selectors
import time
from asyncio import events
from typing import Any, Optional

logger = logging.getLogger(__name__)

#: What an I/O callback's OSError means "out of descriptors or memory for
#: now" (asyncio's own accept loop backs off on the same errors). The
#: callback's fd is left out of polling for RESOURCE_RETRY_SECONDS, and
#: one line is logged per RESOURCE_LOG_INTERVAL_SECONDS, instead of a
#: traceback per poll at full CPU (a listening socket stays readable).
RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
RESOURCE_RETRY_SECONDS = 0.1
RESOURCE_LOG_INTERVAL_SECONDS = 10.0


class RestingFds:
    """Mixin for an ``asyncio.SelectorEventLoop``; call :meth:`_init_resting_fds` in ``__init__``."""

    def _init_resting_fds(self) -> None:
        # fds left out of polling after EMFILE & co: fd -> (fileobj, events,
        # (reader, writer), the timer that puts them back).
        self._resting_fds: dict[int, tuple] = {}
        self._resource_logged_at = -math.inf
        self._resource_unlogged = 0

    def call_exception_handler(self, context: dict) -> None:
        exc = context.get("exception")
        handle = context.get("handle")
        if (isinstance(exc, OSError) and exc.errno in RESOURCE_ERRNOS
                and isinstance(handle, events.Handle)):
            fd = self._reader_fd_of(handle)
            if fd is not None:
                self._rest_fd(fd, exc)
                return
        super().call_exception_handler(context)

    def _reader_fd_of(self, handle: events.Handle) -> Optional[int]:
        for key in self._selector.get_map().values():
            if key.data[0] is handle:
                return key.fd
        return None

    def _rest_fd(self, fd: int, exc: OSError) -> None:
        key = self._selector.unregister(fd)
        timer = self.call_later(RESOURCE_RETRY_SECONDS, self._wake_fd, fd)
        self._resting_fds[fd] = (key.fileobj, key.events, key.data, timer)
        now = time.monotonic()
        if now - self._resource_logged_at < RESOURCE_LOG_INTERVAL_SECONDS:
            self._resource_unlogged += 1
            return
        since = (f" ({self._resource_unlogged} more time(s) since the last report)"
                 if self._resource_unlogged else "")
        logger.error("I/O callback on fd %d: %s (%s); polling it again every %.1fs while "
                     "this lasts, reported once per %.0fs%s", fd, exc.strerror,
                     errno.errorcode.get(exc.errno, exc.errno), RESOURCE_RETRY_SECONDS,
                     RESOURCE_LOG_INTERVAL_SECONDS, since)
        self._resource_logged_at = now
        self._resource_unlogged = 0

    def _wake_fd(self, fd: int) -> None:
        entry = self._resting_fds.pop(fd, None)
        if entry is not None:
            fileobj, mask, data, _timer = entry
            self._selector.register(fileobj, mask, data)

    def _wake_fd_now(self, fd: Any) -> None:
        """Before any change to ``fd``'s callbacks: put it back in polling first."""
        if getattr(self, "_resting_fds", None):  # (None inside asyncio's __init__)
            try:
                number = selectors._fileobj_to_fd(fd)
            except ValueError:
                return
            entry = self._resting_fds.get(number)
            if entry is not None:
                entry[3].cancel()
                self._wake_fd(number)

    def _add_reader(self, fd: Any, callback: Any, *args: Any) -> Any:
        self._wake_fd_now(fd)
        return super()._add_reader(fd, callback, *args)

    def _remove_reader(self, fd: Any) -> bool:
        self._wake_fd_now(fd)
        return super()._remove_reader(fd)

    def _add_writer(self, fd: Any, callback: Any, *args: Any) -> Any:
        self._wake_fd_now(fd)
        return super()._add_writer(fd, callback, *args)

    def _remove_writer(self, fd: Any) -> bool:
        self._wake_fd_now(fd)
        return super()._remove_writer(fd)

