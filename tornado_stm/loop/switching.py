"""What a thread must put aside when an atomic section gives the world lock up.

An atomic section starts inside framework code (a Tornado callback calls
an application function) and releases the world lock W while it runs
optimistically. Another thread then takes W and runs other callbacks of
the same event loop. Two pieces of framework state are per *loop* rather
than per thread, and would otherwise leak from one thread to the other:

* asyncio's "current task". On 3.11-3.13 it is a dict keyed by loop
  (``asyncio.tasks._current_tasks``, the C accelerator's own dict when
  ``_asyncio`` is loaded). While a task step is suspended in a section,
  another task step of the same loop will call ``_enter_task``, which
  refuses to run if the loop already has a current task. So the section
  takes its task out on the way out and puts it back on the way in. 3.12
  and later expose ``_swap_current_task`` for exactly this; on 3.11 the
  dict is edited directly. (3.14 keeps the current task per thread; the
  swap is then a harmless no-op round trip.)
* the loop's *driver seat*: the thread that gives W up was the one
  running the loop's ready handles. The loop is told, so that an idle
  worker can take the seat and keep the loop going, and told again when
  the section is back, so that it knows when sections may be waiting to
  commit (see :meth:`TransactionalEventLoop._section_leaving`).

The running loop (``asyncio.events._set_running_loop``), asyncgen hooks
and the current ``contextvars`` context are per thread already, so they
need no swapping: each worker sets the running loop once when it starts,
and each handle runs in its own context, as asyncio always does.

:func:`register` wires both pairs into ``WORLD_LOCK`` exactly once.
"""

from __future__ import annotations

import asyncio
import threading
from asyncio import events, tasks
from typing import Optional

from tornado_stm.stm.worldlock import WORLD_LOCK

_registered = False
_register_lock = threading.Lock()

_swap = getattr(tasks, "_swap_current_task", None)


def _swap_current_task(loop: asyncio.AbstractEventLoop,
                       task: Optional[asyncio.Task]) -> Optional[asyncio.Task]:
    """Make ``task`` (or none) the current task of ``loop``; return the previous one."""
    if _swap is not None:
        return _swap(loop, task)
    # 3.11: the same dict the C accelerator reads and writes.
    current = tasks._current_tasks
    previous = current.pop(loop, None)
    if task is not None:
        current[loop] = task
    return previous


def _save_current_task() -> tuple:
    loop = events._get_running_loop()
    if loop is None:
        return (None, None)
    return (loop, _swap_current_task(loop, None))


def _restore_current_task(saved: tuple) -> None:
    loop, task = saved
    if loop is not None and task is not None:
        _swap_current_task(loop, task)


def _hand_over_driver_seat() -> object:
    loop = events._get_running_loop()
    leaving = getattr(loop, "_section_leaving", None)
    if leaving is None:
        return None
    leaving()
    return loop


def _take_seat_back(loop: object) -> None:
    if loop is not None:
        loop._section_back()


def register() -> None:
    """Register the loop's context switches with ``WORLD_LOCK`` (idempotent)."""
    global _registered
    with _register_lock:
        if _registered:
            return
        WORLD_LOCK.register_context_switch(_save_current_task, _restore_current_task)
        WORLD_LOCK.register_context_switch(_hand_over_driver_seat, _take_seat_back)
        _registered = True
