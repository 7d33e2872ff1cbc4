"""A stand-in for PyPy-STM's ``transaction`` module that runs on plain threads, with no STM.

The adversarial programs in the parent directory are written for
``tornado-stm exec``: ``transaction.add(f, i)`` queues a call and
``transaction.run()`` runs the queue on N threads, each call as one atomic
section. Put this directory first on ``PYTHONPATH`` and run a program with the
plain interpreter instead: ``import transaction`` then finds this module, and
the same calls run on N ordinary threads, overlapping freely. On a
free-threaded CPython with the GIL disabled the programs' serial invariants
then break, which shows that the programs can see a race and that a run
printing ``OK`` under the STM means something.

``$PLAIN_THREADS`` sets N (default 2). The workers wait on a barrier before
taking their first call, so that they really overlap from the start instead
of the first thread draining the queue while the next one is being created.
As with the STM, an exception raised by a call ends ``run()`` (after the
workers stop) and propagates from it.
"""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable
from typing import Any

_queue: collections.deque[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = (
    collections.deque())
_threads = int(os.environ.get("PLAIN_THREADS", "2"))


def set_num_threads(count: int) -> None:
    """Use ``count`` threads for the next ``run()``."""
    global _threads
    _threads = count


def add(function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Queue ``function(*args, **kwargs)`` for ``run()`` (also from a running call)."""
    _queue.append((function, args, kwargs))


def run() -> None:
    """Run every queued call on the worker threads, with no isolation; return when drained."""
    start = threading.Barrier(_threads)
    errors: list[BaseException] = []

    def worker() -> None:
        start.wait()
        while not errors:
            try:
                function, args, kwargs = _queue.popleft()   # atomic on a deque
            except IndexError:
                return
            try:
                function(*args, **kwargs)
            except BaseException as exc:                     # re-raised by run()
                errors.append(exc)

    workers = [threading.Thread(target=worker) for _ in range(_threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    if errors:
        raise errors[0]
