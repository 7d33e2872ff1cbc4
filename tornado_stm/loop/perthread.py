"""One asyncio event loop per thread: the whole request path on every core.

The shared :class:`~tornado_stm.loop.TransactionalEventLoop` runs all
framework code under the world lock W, so only handler bodies run in
parallel. Here each of N threads runs a loop of its own, as the fastest
free-threaded Python servers do: every loop polls the same listening
socket (``binding.bind_per_loop``), so a loop busy with a long handler
accepts nothing while an idle one takes the new connection; the loop that
accepts gives it to the least busy loop (:mod:`.balance`), and a
connection stays on the loop it was given to. Tornado supports one
``IOLoop`` per thread, and a connection's objects (its stream, request,
handler) are touched by its own thread only, so framework code needs no
W at all.

W keeps the jobs that must be serial:

* an atomic section (a handler's ``get``...) starts without W, runs
  optimistically, and takes W only to commit, or from the moment it
  becomes inevitable to its end;
* a step of an application coroutine (an ``async def`` handler) holds W
  while it runs (``section.entry``), since its frame cannot be rolled
  back: other loops' framework code and other sections' optimistic work
  go on, only their commits wait;
* a handler's response (``write``, ``finish``...) no longer needs W: it
  is held back and sent at commit (:mod:`tornado_stm.loop.response`).

:class:`ThreadLoop` is asyncio's selector loop plus the fd rest on EMFILE
(:mod:`.resting`); :class:`LoopThreads` starts N of them and runs one
coroutine on each.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import logging
import threading
from types import BuiltinFunctionType, FunctionType, MethodType
from typing import Any, Callable, Coroutine

import tornado.ioloop

from tornado_stm.loop import request, scheduling
from tornado_stm.loop.resting import RestingFds
from tornado_stm.stm.policy import BOUND_C_METHOD_TYPE
from tornado_stm.stm.worldlock import WORLD_LOCK

logger = logging.getLogger(__name__)

_get_ident = threading.get_ident
_SELECTOR_CALL_SOON = asyncio.SelectorEventLoop.call_soon


class ThreadLoop(RestingFds, asyncio.SelectorEventLoop):
    """asyncio's selector loop, run by one thread of a per-thread server."""

    def __init__(self, selector: Any = None) -> None:
        super().__init__(selector)
        self._init_resting_fds()
        request.install()
        scheduling.install(type(self))
        share_primitives_between_loops()

    def call_soon(self, callback: Callable[..., Any], *args: Any,
                  context: Any = None) -> asyncio.Handle:
        """As asyncio's, and from another loop's thread as ``call_soon_threadsafe``.

        A future of this loop is resolved from another thread when a shared
        ``tornado.locks.Condition``, ``asyncio.Event`` or ``asyncio.Lock`` is
        notified by a handler on another loop (Tornado's chat demo): its
        callbacks must wake this loop, or the waiter sleeps until its next
        event.
        """
        # (inline and without super(): every future's callback comes here)
        owner = self._thread_id
        if owner is not None and owner != _get_ident():
            return self.call_soon_threadsafe(callback, *args, context=context)
        return _SELECTOR_CALL_SOON(self, _holding_w_if_shared(callback, args), *args,
                                   context=context)

    def call_soon_threadsafe(self, callback: Callable[..., Any], *args: Any,
                             context: Any = None) -> asyncio.Handle:
        return super().call_soon_threadsafe(_holding_w_if_shared(callback, args), *args,
                                            context=context)

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any,
                context: Any = None) -> asyncio.TimerHandle:
        """As asyncio's, and from another loop's thread too (``call_later`` comes here).

        An application that kept ``IOLoop.current()`` of the loop that ran
        its factory schedules timers on it from handlers running on the
        other loops. The timer heap is the owner's alone: the handle is
        pushed onto it by the owner's thread, which the call also wakes (a
        push from elsewhere raced the owner and waited for its next event).
        """
        callback = _holding_w_if_shared(callback, args)
        if not self._on_another_thread():
            return super().call_at(when, callback, *args, context=context)
        timer = asyncio.TimerHandle(when, callback, args, self, context)
        self.call_soon_threadsafe(self._schedule, timer)
        return timer

    def _on_another_thread(self) -> bool:
        """True when called while this loop runs on another thread."""
        owner = self._thread_id
        return owner is not None and owner != threading.get_ident()

    def _schedule(self, timer: asyncio.TimerHandle) -> None:
        """Put a timer made on another thread onto this loop's heap (on this loop's thread)."""
        if not timer.cancelled():
            heapq.heappush(self._scheduled, timer)
            timer._scheduled = True


#: The modules of the synchronization primitives an application may share
#: between loops (a module-level ``tornado.locks.Event``): the callbacks
#: they schedule change the primitive's state.
_SHARED_PRIMITIVE_MODULES = frozenset({"tornado.locks", "tornado.queues", "asyncio.locks",
                                       "asyncio.queues"})


def _holding_w_if_shared(callback: Callable[..., Any], args: tuple = ()) -> Callable[..., Any]:
    """``callback`` (to be called with ``args``), made to run holding W if a
    shared primitive scheduled it.

    ``tornado.locks.Event.wait`` removes its waiter's future from the
    event's set in a done-callback, which runs on the waiter's loop; a
    handler on another loop may be iterating that set in ``set()`` (under
    W, its section inevitable) at the same time ("Set changed size during
    iteration"). Queues and conditions drop expired waiters the same way,
    and their timeouts (``Condition.wait(timeout=)``, ``Semaphore.acquire``,
    ``Queue.get``) settle a waiter another loop may be notifying. Such
    callbacks change state shared between loops, so they take W as a
    coroutine step does. Tornado schedules its own through
    ``IOLoop._run_callback``, the callback its argument.
    """
    target = callback
    kind = type(target)
    if kind is MethodType:              # the common cases first, without getattr()
        if target.__func__ is _TORNADO_RUN_CALLBACK and args:
            return callback if _holding_w_if_shared(args[0]) is args[0] \
                else functools.partial(_run_holding_w, callback)
        module = target.__func__.__module__
    elif kind is FunctionType:
        module = target.__module__
    elif kind is BuiltinFunctionType or kind is BOUND_C_METHOD_TYPE or kind.__module__ == "_asyncio":
        # C code every request schedules (a task's wake-up and step, a
        # future's set_result): no primitive's Python
        return callback
    else:
        while isinstance(target, functools.partial):
            target = target.func
        target = getattr(target, "__func__", target)
        module = getattr(target, "__module__", None)
    if module not in _SHARED_PRIMITIVE_MODULES:
        return callback
    return functools.partial(_run_holding_w, callback)


#: What Tornado's IOLoop hands asyncio for every callback and timeout it schedules.
_TORNADO_RUN_CALLBACK = tornado.ioloop.IOLoop._run_callback


def _run_holding_w(callback: Callable[..., Any], *args: Any) -> Any:
    with WORLD_LOCK.held_for_the_block():
        return callback(*args)


def _running_loop(primitive: Any) -> asyncio.AbstractEventLoop:
    """``_LoopBoundMixin._get_loop`` for per-thread loops: the loop of the caller.

    asyncio's locks, events, queues and semaphores bind to the first loop
    that uses them and refuse any other ("is bound to a different event
    loop"). A module-level ``asyncio.Lock`` of an application is used by
    every loop here; each waiter's future belongs to its own loop, which
    ``ThreadLoop.call_soon`` wakes, and the primitive's state is changed by
    coroutine steps, which hold W (so one at a time).
    """
    loop = asyncio.get_running_loop()
    if primitive._loop is None:
        primitive._loop = loop
    return loop


def share_primitives_between_loops() -> None:
    """Let asyncio's synchronization primitives serve every loop of the process."""
    mixins = getattr(asyncio, "mixins", None)
    if mixins is not None:
        mixins._LoopBoundMixin._get_loop = _running_loop


class LoopThreads:
    """N threads, each running its own :class:`ThreadLoop`.

    :meth:`run` runs ``main(index, loop)`` on every loop -- loop 0 on the
    calling thread (the main thread keeps signal handling), the others on
    threads of their own -- and returns when all have finished. The first
    exception, if any, is raised again on the calling thread.
    """

    def __init__(self, count: int) -> None:
        self.loops = [ThreadLoop() for _ in range(max(1, count))]
        self._errors: list[BaseException] = []

    def __len__(self) -> int:
        return len(self.loops)

    def run(self, main: Callable[[int, asyncio.AbstractEventLoop], Coroutine[Any, Any, Any]]
            ) -> None:
        threads = [threading.Thread(target=self._run_one, args=(index, main),
                                    name=f"tornado-stm-loop-{index}", daemon=True)
                   for index in range(1, len(self.loops))]
        for thread in threads:
            thread.start()
        self._run_one(0, main)
        for thread in threads:
            thread.join()
        if self._errors:
            raise self._errors[0]

    def _run_one(self, index: int, main: Callable[..., Coroutine[Any, Any, Any]]) -> None:
        loop = self.loops[index]
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(main(index, loop))
            loop.run_until_complete(loop.shutdown_asyncgens())
        except BaseException as exc:
            self._errors.append(exc)
            if index:
                # Nothing else would stop the other loops: the main one
                # must learn of it (serve turns it into a shutdown).
                logger.error("event loop %d stopped: %s", index, exc)

    def close(self) -> None:
        for loop in self.loops:
            if not loop.is_closed():
                loop.close()
