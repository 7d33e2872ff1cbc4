"""The transactional event loop and the ways to make asyncio and Tornado use it.

* :class:`TransactionalEventLoop` -- the loop (see :mod:`.eventloop`).
* :func:`new_event_loop` -- a loop factory, for
  ``asyncio.run(main(), loop_factory=tornado_stm.new_event_loop)`` (3.12+).
* :func:`install` -- make every later ``asyncio.new_event_loop()``,
  ``asyncio.run()`` and Tornado ``IOLoop`` use the transactional loop, by
  installing :class:`TransactionalEventLoopPolicy` (the way to choose a
  loop that also works on 3.11).
"""

from __future__ import annotations

import asyncio
from typing import Optional

from tornado_stm.loop.eventloop import TransactionalEventLoop, default_thread_count

__all__ = ["TransactionalEventLoop", "TransactionalEventLoopPolicy",
           "default_thread_count", "install", "new_event_loop"]


def new_event_loop(*, threads: Optional[int] = None,
                   pipelining: bool = True) -> TransactionalEventLoop:
    """A new :class:`TransactionalEventLoop` (``threads`` defaults to one per core)."""
    return TransactionalEventLoop(threads=threads, pipelining=pipelining)


class TransactionalEventLoopPolicy(asyncio.DefaultEventLoopPolicy):
    """asyncio's default policy, creating transactional loops."""

    def __init__(self, *, threads: Optional[int] = None, pipelining: bool = True) -> None:
        super().__init__()
        self.threads = threads
        self.pipelining = pipelining

    def new_event_loop(self) -> TransactionalEventLoop:
        return new_event_loop(threads=self.threads, pipelining=self.pipelining)


def install(*, threads: Optional[int] = None,
            pipelining: bool = True) -> TransactionalEventLoopPolicy:
    """Make the next event loops asyncio or Tornado create transactional ones."""
    policy = TransactionalEventLoopPolicy(threads=threads, pipelining=pipelining)
    asyncio.set_event_loop_policy(policy)
    return policy
