"""The loop rests an fd whose callback fails for want of descriptors, and never loses track of it."""

from __future__ import annotations

import errno
import logging
import socket

from tornado_stm.loop import new_event_loop
from tornado_stm.loop import resting


def test_an_fd_out_of_descriptors_rests_then_is_polled_again(caplog) -> None:
    loop = new_event_loop(threads=2)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    client = socket.create_connection(listener.getsockname())  # the listener is readable
    calls: list[float] = []

    def accept() -> None:
        calls.append(loop.time())
        raise OSError(errno.EMFILE, "Too many open files")

    try:
        loop.add_reader(listener.fileno(), accept)
        with caplog.at_level(logging.ERROR):
            loop.run_until_complete(__import__("asyncio").sleep(0.55))
        # Level-triggered and always failing: without a rest, thousands of calls.
        assert 3 <= len(calls) <= 8, len(calls)
        reports = [r for r in caplog.records if "Too many open files" in r.getMessage()]
        assert len(reports) == 1 and "fd" in reports[0].getMessage()
        assert not [r for r in caplog.records if "Exception in callback" in r.getMessage()]
        # Removing the reader while it rests removes it for good.
        assert loop.remove_reader(listener.fileno()) is True
        assert listener.fileno() not in loop._resting_fds
        calls.clear()
        loop.run_until_complete(__import__("asyncio").sleep(0.3))
        assert calls == []
    finally:
        client.close()
        listener.close()
        loop.close()


def test_other_errors_still_reach_the_exception_handler() -> None:
    loop = new_event_loop(threads=1)
    seen: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    reader, writer = socket.socketpair()
    writer.send(b"x")

    def broken() -> None:
        loop.remove_reader(reader.fileno())
        raise OSError(errno.EBADF, "Bad file descriptor")

    try:
        loop.add_reader(reader.fileno(), broken)
        loop.run_until_complete(__import__("asyncio").sleep(0.1))
        assert len(seen) == 1 and seen[0]["exception"].errno == errno.EBADF
        assert not loop._resting_fds
    finally:
        reader.close()
        writer.close()
        loop.close()
    assert resting.RESOURCE_RETRY_SECONDS > 0
