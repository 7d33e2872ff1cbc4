"""``TransactionalEventLoop``: an asyncio selector loop driven by several threads.

Tornado 6 runs on asyncio, so running Tornado on every core needs no
change to Tornado: only the event loop under it changes. This loop keeps
asyncio's data structures (``_ready``, ``_scheduled``, the selector) and
replaces the one method that runs callbacks, ``_run_once``.

How it runs
-----------
Framework code -- asyncio, Tornado, the standard library -- runs under
the world lock W (``tornado_stm.stm.worldlock.WORLD_LOCK``), one thread
at a time. Application code runs in atomic sections that give W up while
they run optimistically (``WORLD_LOCK.suspend()``) and take it back to
commit (``WORLD_LOCK.resume()``). The loop exploits exactly that gap:

* Any thread that holds W and has nothing to run is a *driver*: it polls
  the selector, moves the due timers and the ready callbacks into the
  current *batch*, and runs the batch's handles one after the other.
  The thread that called ``run_forever`` is the first driver; with no
  section ever giving W up it is the only one, and the loop behaves
  exactly like asyncio's own (and costs about the same).
* When a handle's section gives W up, the switch hook registered in
  :mod:`tornado_stm.loop.switching` calls :meth:`_section_leaving`: an idle
  worker thread (started on demand, at most ``threads - 1`` of them) takes
  W and goes on running the batch -- and polling, so that one slow
  handler does not hold up every ready socket (*pipelining*). The
  section's thread takes W back to commit and returns to driving.
* Without pipelining (``pipelining=False``) the loop polls again only when
  every handle of the batch has finished, as the 2014 PyPy-STM Tornado
  loop did; that is the reference the benchmark compares against.

Ordering guarantees
-------------------
* Handles *start* in asyncio's order: callbacks in ``call_soon`` order,
  then, after each poll, I/O callbacks and due timers as asyncio queues
  them. Callbacks scheduled while a batch runs wait for the next poll, as
  in asyncio. A handle that never gives W up also *finishes* before the
  next one starts, so with no application section the loop is exactly
  serial.
* Handles that share an *ordering key* never overlap, even when the
  first gives W up: the key of an I/O callback is its file descriptor
  (the reader and writer callbacks of one connection), the key of every
  other handle is its ``contextvars.Context`` (so the steps of one task,
  which all run in the task's context, never overlap). A handle whose
  key is busy waits at the head of the batch; nothing overtakes it.
* ``call_soon_threadsafe`` from foreign threads, signal handlers,
  ``run_in_executor``, exception handlers, ``stop()``,
  ``shutdown_asyncgens`` and ``shutdown_default_executor`` work as in
  asyncio. ``stop()`` lets the current batch finish -- including handles
  still inside a section on another thread -- before ``run_forever``
  returns.

Why not ``transaction.TransactionQueue``: its ``run()`` waits for the
whole batch before the next poll, and handing every handle to a pool
thread costs two thread switches per handle even when nothing runs in
parallel (the prototype measured half of stock asyncio's hello-world
rate). Running handles on whichever thread holds W, and recruiting a
second thread only when a section leaves W, avoids both.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import logging
import math
import os
import selectors
import sys
import threading
import time
from asyncio import base_events, events
from asyncio.log import logger as asyncio_logger
from typing import Any, Hashable, Optional

from tornado_stm.loop import request, scheduling, switching
from tornado_stm.loop.resting import RestingFds
from tornado_stm.stm import log as stmlog
from tornado_stm.stm.worldlock import WORLD_LOCK

logger = logging.getLogger(__name__)

#: A driver that has held the world lock this long while sections of its
#: loop are out lets go of it for FAIR_PAUSE_SECONDS, so they can commit.
FAIR_SLICE_SECONDS = 0.005
FAIR_PAUSE_SECONDS = 0.0001



def default_thread_count() -> int:
    """Threads that may run handles at once: one per core."""
    return os.cpu_count() or 1


class TransactionalEventLoop(RestingFds, asyncio.SelectorEventLoop):
    """A selector event loop whose handles run on up to ``threads`` threads.

    ``threads`` counts the thread that calls ``run_forever``; the others
    are started only when a section first gives the world lock up.
    ``pipelining`` lets a free thread poll for I/O while sections of the
    current batch still run.
    """

    def __init__(self, selector: Any = None, *, threads: Optional[int] = None,
                 pipelining: bool = True) -> None:
        super().__init__(selector)
        switching.register()
        request.install()
        scheduling.install(type(self))
        self._threads = max(1, threads if threads is not None else default_thread_count())
        self._pipelining = pipelining
        # Invariant: every field from here to _workers is read and written
        # only under W (the lock order is W, then _idle_mutex).
        # (handle, ordering key) pairs taken at the last poll, not started yet.
        self._batch: collections.deque = collections.deque()
        # Invariant: a key is in _busy_keys from the start of its handle to
        # its end, so two handles of one connection never run at once.
        self._busy_keys: set = set()        # ordering keys of started, unfinished handles
        # Invariant: an I/O handle is in _queued_io exactly while it is in
        # _batch, so a poll does not queue the same fd's callback twice.
        self._queued_io: set = set()        # I/O handles in the batch, not started
        # A poll found only fds whose callbacks are busy or queued: polling
        # again before a handle finishes would find them again, and spin.
        self._poll_after_a_handle = False
        # Invariant: _unfinished == handles started and not finished, and
        # _sections_out <= _unfinished (a section out of W belongs to one).
        self._unfinished = 0                # handles started and not finished
        self._sections_out = 0              # sections of this loop without W right now
        self._holding_since = 0.0           # when the thread holding W took it
        self._driving = False               # run_forever is running
        self._poller_waiting = False        # a driver is blocked in select() without W
        self._poll_deadline = math.inf      # when that select() returns on its own
        self._worker_error: Optional[BaseException] = None
        self._workers: list[threading.Thread] = []
        # Idle drivers wait on their own condition; a waker removes the one
        # it wakes from ``_idle``, so no wake-up is ever counted twice.
        # Invariant: _idle, _closing_workers and the seats' waits change only
        # under _idle_mutex, and a seat is in _idle only while its thread waits.
        self._idle_mutex = threading.Lock()
        self._idle: list[threading.Condition] = []
        self._loop_thread_seat = threading.Condition(self._idle_mutex)
        self._closing_workers = False
        # Calls that only the thread running run_forever may make (signal
        # handlers need the main thread), handed over by worker threads.
        self._loop_thread_calls: collections.deque = collections.deque()
        self._init_resting_fds()

    # ------------------------------------------------------------------
    # Public knobs
    @property
    def threads(self) -> int:
        return self._threads

    @property
    def pipelining(self) -> bool:
        return self._pipelining

    # ------------------------------------------------------------------
    # run_forever: the calling thread is the first driver
    def run_forever(self) -> None:
        # Sections may run now: $PYPYSTM's log, unless a command opened one.
        stmlog.open_from_environment()
        took_world_lock = not WORLD_LOCK.held_by_current_thread()
        if took_world_lock:
            WORLD_LOCK.acquire()
        try:
            super().run_forever()
        finally:
            if took_world_lock:
                WORLD_LOCK.release()

    def _run_once(self) -> None:
        # asyncio's run_forever calls this in a loop until _stopping; here
        # one call drives the loop until stop() and the end of the batch.
        self._driving = True
        self._holding_since = time.monotonic()
        try:
            self._drive(self._loop_thread_seat, is_loop_thread=True)
        except BaseException:
            self._abandon_batch()
            raise
        finally:
            self._driving = False

    def _drive(self, seat: threading.Condition, is_loop_thread: bool) -> None:
        """Run handles and poll, holding W, until there is nothing left for this thread."""
        batch = self._batch
        while True:
            if is_loop_thread:
                while self._loop_thread_calls:
                    self._loop_thread_calls.popleft()()
                if self._worker_error is not None:
                    error, self._worker_error = self._worker_error, None
                    raise error
            elif self._closing_workers:
                return
            if self._sections_out and time.monotonic() - self._holding_since > FAIR_SLICE_SECONDS:
                self._let_sections_commit()
            if self._driving and batch:
                handle, key = batch[0]
                if handle._cancelled:
                    batch.popleft()
                    self._queued_io.discard(handle)
                    continue
                if key not in self._busy_keys:
                    batch.popleft()
                    if key < 0:
                        self._queued_io.discard(handle)
                    self._run_handle(handle, key, is_loop_thread)
                    continue
            if self._stopping and self._driving:
                if is_loop_thread and not batch and not self._unfinished:
                    return
            elif self._driving and self._may_poll():
                self._poll()
                continue
            if not self._idle_wait(seat):
                return

    def _may_poll(self) -> bool:
        if self._poller_waiting or self._poll_after_a_handle:
            return False
        if self._pipelining:
            return True
        return not self._batch and not self._unfinished

    # ------------------------------------------------------------------
    # Running one handle
    def _run_handle(self, handle: events.Handle, key: Hashable, is_loop_thread: bool) -> None:
        self._busy_keys.add(key)
        self._unfinished += 1
        try:
            if self._debug:
                self._run_handle_timed(handle)
            else:
                handle._run()
        except BaseException as exc:
            # SystemExit and KeyboardInterrupt: asyncio lets them out of
            # run_forever. A worker has no caller to raise to, so the loop
            # thread raises it on the worker's behalf.
            if is_loop_thread:
                raise
            self._worker_error = exc
            self._stopping = True
        finally:
            self._busy_keys.discard(key)
            self._unfinished -= 1
            self._poll_after_a_handle = False
            # The common case -- one driver, running -- tests three flags.
            if self._poller_waiting or self._stopping or not self._driving:
                self._after_handle()

    def _run_handle_timed(self, handle: events.Handle) -> None:
        self._current_handle = handle
        start = self.time()
        try:
            handle._run()
        finally:
            self._current_handle = None
        elapsed = self.time() - start
        if elapsed >= self.slow_callback_duration:
            # asyncio's own logger and words, as on asyncio's loop.
            asyncio_logger.warning("Executing %s took %.3f seconds",
                                   base_events._format_handle(handle), elapsed)

    def _after_handle(self) -> None:
        """Wake whoever must react to what the handle just did."""
        if self._poller_waiting and (
                self._ready or self._stopping or self._worker_error is not None
                or (self._scheduled and self._scheduled[0]._when < self._poll_deadline)):
            self._write_to_self()
        if not self._unfinished and not self._batch and (
                self._stopping or not self._driving):
            self._wake(self._loop_thread_seat)

    # ------------------------------------------------------------------
    # Polling: asyncio's _run_once without the running part
    def _poll(self) -> None:
        self._drop_cancelled_timers()
        if self._ready or self._stopping:
            timeout: Optional[float] = 0
        elif self._scheduled:
            timeout = min(max(0.0, self._scheduled[0]._when - self.time()),
                          base_events.MAXIMUM_SELECT_TIMEOUT)
        else:
            timeout = None
        if timeout == 0:
            event_list = self._selector.select(0)
        else:
            # Block without W, so that sections can commit meanwhile.
            self._poller_waiting = True
            self._poll_deadline = math.inf if timeout is None else self.time() + timeout
            WORLD_LOCK.release()
            try:
                event_list = self._selector.select(timeout)
            finally:
                self._take_world_lock()
                self._poller_waiting = False
        # The batch, in asyncio's order: what was ready before the poll,
        # then I/O callbacks, then due timers.
        self._take_ready_into_batch()
        if self._process_events(event_list) and not self._batch:
            self._poll_after_a_handle = True
        event_list = None  # break cycles when an exception occurs, as asyncio does
        self._queue_due_timers()

    def _drop_cancelled_timers(self) -> None:
        scheduled = self._scheduled
        count = len(scheduled)
        if (count > base_events._MIN_SCHEDULED_TIMER_HANDLES and
                self._timer_cancelled_count / count >
                base_events._MIN_CANCELLED_TIMER_HANDLES_FRACTION):
            kept = []
            for timer in scheduled:
                if timer._cancelled:
                    timer._scheduled = False
                else:
                    kept.append(timer)
            heapq.heapify(kept)
            self._scheduled = kept
            self._timer_cancelled_count = 0
            return
        while scheduled and scheduled[0]._cancelled:
            self._timer_cancelled_count -= 1
            heapq.heappop(scheduled)._scheduled = False

    def _process_events(self, event_list: list) -> int:
        """Queue the I/O callbacks of ``event_list``; return how many were held back.

        As asyncio's, but straight into the batch, each I/O callback keyed
        by its file descriptor. Keys are ints: ~fd (negative) for I/O,
        id(context) (positive; the handle keeps its context alive while it
        runs) for everything else -- Context objects are unhashable.

        With pipelining, a poll can find an fd ready again while its
        callback is still queued or running (readiness is level-triggered).
        That callback is held back, not queued twice: the fd is polled
        again after it has run, and reported again if still ready.
        """
        held_back = 0
        for key, mask in event_list:
            reader, writer = key.data
            if mask & selectors.EVENT_READ and reader is not None:
                if reader._cancelled:
                    self._remove_reader(key.fileobj)
                else:
                    held_back += self._queue_io(reader, ~key.fd)
            if mask & selectors.EVENT_WRITE and writer is not None:
                if writer._cancelled:
                    self._remove_writer(key.fileobj)
                else:
                    held_back += self._queue_io(writer, ~key.fd)
        return held_back

    def _queue_io(self, handle: events.Handle, fd_key: int) -> int:
        if handle in self._queued_io or fd_key in self._busy_keys:
            return 1
        self._batch.append((handle, fd_key))
        self._queued_io.add(handle)
        return 0

    def _queue_due_timers(self) -> None:
        end_time = self.time() + self._clock_resolution
        scheduled, batch = self._scheduled, self._batch
        while scheduled and scheduled[0]._when < end_time:
            timer = heapq.heappop(scheduled)
            timer._scheduled = False
            batch.append((timer, id(timer._context)))

    def _take_ready_into_batch(self) -> None:
        ready, batch = self._ready, self._batch
        # popleft one by one: call_soon_threadsafe may append concurrently.
        for _ in range(len(ready)):
            handle = ready.popleft()
            batch.append((handle, id(handle._context)))

    def _abandon_batch(self) -> None:
        """After an exception on the loop thread: wait for sections, keep the rest for later."""
        self._driving = False
        self._ready.extendleft(handle for handle, _key in reversed(self._batch))
        self._batch.clear()
        self._queued_io.clear()
        while self._unfinished:
            self._idle_wait(self._loop_thread_seat)

    # ------------------------------------------------------------------
    # Idle drivers and recruiting
    #: How often an idle main thread wakes to run pending signal handlers.
    MAIN_THREAD_WAKE_SECONDS = 0.2

    def _idle_wait(self, seat: threading.Condition) -> bool:
        """Release W, sleep until woken, take W back.

        Returns False, without W, to a worker woken because the loop closes.
        """
        interrupted: Optional[BaseException] = None
        with self._idle_mutex:
            # close() sets the flag under this mutex without W: checking it
            # here, not only under W, is what keeps a worker from parking
            # after close() has woken the parked ones.
            if self._closing_workers and seat is not self._loop_thread_seat:
                WORLD_LOCK.release()
                return False
            self._idle.append(seat)
            WORLD_LOCK.release()
            try:
                if threading.current_thread() is threading.main_thread():
                    # Python runs signal handlers on the main thread only, and a
                    # lock wait there is not interrupted by a signal another
                    # thread took (3.13t): wake up now and then to let them run,
                    # or `serve` can miss SIGTERM while idle (1 stop in 5).
                    while seat in self._idle and not seat.wait(self.MAIN_THREAD_WAKE_SECONDS):
                        pass
                else:
                    seat.wait()
            except BaseException as exc:  # KeyboardInterrupt on the main thread
                interrupted = exc
                if seat in self._idle:
                    self._idle.remove(seat)
        if self._closing_workers and seat is not self._loop_thread_seat:
            return False
        self._take_world_lock()  # after leaving the mutex: the lock order is W, then mutex
        if interrupted is not None:
            raise interrupted
        return True

    def _wake(self, seat: threading.Condition) -> None:
        with self._idle_mutex:
            if seat in self._idle:
                self._idle.remove(seat)
                seat.notify()

    def _section_leaving(self) -> None:
        """Called under W when a thread's section is about to give W up."""
        self._sections_out += 1
        self._recruit_driver()

    def _take_world_lock(self) -> None:
        """Take W as a driver, starting its fairness slice (see _let_sections_commit)."""
        WORLD_LOCK.acquire()
        self._holding_since = time.monotonic()

    def _section_back(self) -> None:
        """Called when a section has taken W back (to commit, or to go on inevitably)."""
        self._sections_out -= 1
        self._holding_since = time.monotonic()

    def _let_sections_commit(self) -> None:
        """Give W up for a moment: a section waiting to take it back gets it.

        The world lock is not fair: a driver with a steady stream of
        callbacks could keep it, and a section that finished its work
        would wait for ever to commit. So a driver that has held W for a
        time slice while sections are out lets go briefly.
        """
        WORLD_LOCK.release()
        time.sleep(FAIR_PAUSE_SECONDS)
        self._take_world_lock()

    def _recruit_driver(self) -> None:
        """If the loop has work that no one else will do meanwhile, wake an
        idle worker, or start one if fewer than ``threads - 1`` exist.
        """
        if not self._driving or self._stopping and not self._batch:
            return
        if not self._batch and not self._may_poll():
            return
        with self._idle_mutex:
            if self._idle:
                self._idle.pop().notify()
                return
        if len(self._workers) < self._threads - 1:
            self._start_worker()

    def _start_worker(self) -> None:
        worker = threading.Thread(target=self._worker_main,
                                  name=f"tornado-stm-worker-{len(self._workers) + 1}",
                                  daemon=True)
        self._workers.append(worker)
        worker.start()

    def _worker_main(self) -> None:
        events._set_running_loop(self)
        sys.set_asyncgen_hooks(firstiter=self._asyncgen_firstiter_hook,
                               finalizer=self._asyncgen_finalizer_hook)
        seat = threading.Condition(self._idle_mutex)
        self._take_world_lock()
        try:
            self._drive(seat, is_loop_thread=False)
        except BaseException:  # a bug in the loop itself: say so, loudly
            logger.exception("worker thread of %r died", self)
        finally:
            if WORLD_LOCK.held_by_current_thread():
                WORLD_LOCK.release()

    # ------------------------------------------------------------------
    # asyncio hooks that assume a single thread
    def add_signal_handler(self, sig: int, callback: Any, *args: Any) -> None:
        self._on_loop_thread(super().add_signal_handler, sig, callback, *args)

    def remove_signal_handler(self, sig: int) -> bool:
        return self._on_loop_thread(super().remove_signal_handler, sig)

    def _on_loop_thread(self, function: Any, *args: Any) -> Any:
        """Call ``function`` on the thread running the loop, from any thread holding W.

        A coroutine step may run on a worker, but ``signal.signal`` works
        only on the main thread: the worker hands the call over and waits
        for it without W.
        """
        if (self._thread_id in (None, threading.get_ident())
                or not WORLD_LOCK.held_by_current_thread()):
            return function(*args)
        done = threading.Event()
        outcome: list = []

        def call() -> None:
            try:
                outcome.append((True, function(*args)))
            except BaseException as exc:
                outcome.append((False, exc))
            done.set()

        self._loop_thread_calls.append(call)
        self._wake(self._loop_thread_seat)
        if self._poller_waiting:
            self._write_to_self()
        token = WORLD_LOCK.suspend()
        try:
            done.wait()
        finally:
            WORLD_LOCK.resume(token)
        succeeded, value = outcome[0]
        if not succeeded:
            raise value
        return value

    def _check_thread(self) -> None:
        # Debug mode: any thread that holds W is the loop's thread.
        if self._thread_id is None or WORLD_LOCK.held_by_current_thread():
            return
        super()._check_thread()

    def close(self) -> None:
        if self.is_running():
            raise RuntimeError("Cannot close a running event loop")
        with self._idle_mutex:
            self._closing_workers = True
            for seat in self._idle:
                seat.notify()
            self._idle.clear()
        for worker in self._workers:
            worker.join(timeout=5)
        self._workers.clear()
        super().close()
