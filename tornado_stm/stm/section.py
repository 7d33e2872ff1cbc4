"""Atomic sections: running one call as a transaction, retried until it commits.

:func:`run_section` is the one place where a section begins and ends:

1. If the thread holds the world lock W (framework code called an
   application function), W is given up with ``WORLD_LOCK.suspend()`` so
   framework code and other sections run meanwhile; the section takes it
   back with ``resume()`` to commit or to become inevitable, and ends
   holding W again. A thread that did not hold W (a ``transaction.run``
   worker) takes W only to commit or become inevitable, and ends without it.
2. The call runs with a fresh :class:`~tornado_stm.stm.txn.Transaction`
   as the thread's current transaction. Instrumented code reaches it
   through the barriers.
3. :class:`~tornado_stm.stm.txn.AbortSection` means "retry": the redo log
   is dropped and the call starts again. After ``MAX_ABORTS`` aborts, or
   an abort that says the section cannot run optimistically
   (``AbortSection.inevitable``), the next attempt is inevitable from its
   start, so it cannot abort again.
4. Any other exception first checks the snapshot: if something the call
   read has changed, the exception may come from an inconsistent view and
   is treated as an abort. Otherwise the section *commits* the writes it
   made before the exception, as plain Python (and PyPy-STM) would, and
   the exception propagates unchanged.
5. An inevitable section unlocks the stripes it wrote in place when it
   ends (``txn.release_held``), before framework code goes on.

:func:`entry` wraps each instrumented function so that a call from
uninstrumented code starts a section, while a call made inside a section
(or from inside another instrumented function, which the call barrier
routes to the unwrapped function) is a plain call.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import functools
import inspect
import random
import sys
import threading
import time
import traceback
import weakref
from collections import deque
from types import TracebackType
from typing import Any, Callable, Iterator, Optional, TypeVar

from tornado_stm.stm import faults
from tornado_stm.stm import log as stmlog
from tornado_stm.stm.reach import ATOM_TYPES, copy_of, hold_handed_back
from tornado_stm.stm.registry import INSTRUMENTED_CODES, application_frame, is_engine_code
from tornado_stm.stm.settings import count_from_environment
from tornado_stm.stm.stats import for_current_thread
from tornado_stm.stm.txn import (BARRIERS_CHECK_STEPS, CLOCK_READ_OUT_OF_ORDER, CURRENT,
                                 MODULE_BODY, AbortSection, Transaction,
                                 count_as_finalized, enter_clocks_read_in_place, forget_finalized,
                                 note_if_built_here, release_held)
from tornado_stm.stm.worldlock import WORLD_LOCK

#: Aborts of one section after which it runs inevitably (guaranteed progress);
#: ``$TORNADO_STM_MAX_ABORTS`` when set (read by configure_from_environment).
MAX_ABORTS = 10

#: Seconds: the first back-off after an abort is up to 2 * BACKOFF_BASE, doubling.
BACKOFF_BASE = 10e-6
BACKOFF_MAX = 2e-3

F = TypeVar("F", bound=Callable[..., Any])


def run_section(fn: Callable[..., Any], args: tuple = (), kwargs: dict | None = None,
                inevitable: str | None = None) -> Any:
    """Run ``fn(*args, **kwargs)`` as an atomic section; see the module docstring.

    ``inevitable``, if given, makes the section inevitable from its start
    (the cause recorded in the statistics), as ``exclusive_atomic`` does.
    A call made while a section is already running is a plain call.
    """
    if CURRENT.tx is not None:
        return fn(*args, **(kwargs or {}))
    kwargs = kwargs or {}
    stats = for_current_thread()
    entered_with_w = WORLD_LOCK.held_by_current_thread()
    token = WORLD_LOCK.suspend() if entered_with_w else None
    aborts = 0
    overtaken = False
    while True:
        tx = Transaction(stats, entered_with_w, token)
        tx.clock_priority = overtaken
        if args:
            tx.subject = args[0]
        CURRENT.tx = tx
        stmlog.record(stmlog.STM_TRANSACTION_START, stats.thread_num)
        try:
            if inevitable is not None:
                tx.become_inevitable(inevitable, at_start=True)
            elif aborts >= MAX_ABORTS:
                tx.become_inevitable("too many aborts", at_start=True)
            result = fn(*args, **kwargs)
            tx.commit()
        except AbortSection as abort:
            aborts += 1
            overtaken = overtaken or abort.cause == CLOCK_READ_OUT_OF_ORDER
            token = _after_abort(tx, abort)
            if abort.inevitable:
                inevitable = abort.cause          # it cannot run optimistically
            else:
                _back_off(aborts)
            continue
        except BaseException as exc:
            try:
                # The writes made before the exception stay, as in plain
                # Python; commit() validates first, so an exception raised
                # by an inconsistent view is an abort instead. The attempt
                # is still current: what dies as commit() drops its registry
                # finalizes into it.
                tx.commit()
                CURRENT.tx = None
            except AbortSection as abort:
                aborts += 1
                overtaken = overtaken or abort.cause == CLOCK_READ_OUT_OF_ORDER
                if abort.inevitable:
                    token = _after_abort(tx, abort, exc)
                    inevitable = abort.cause
                    continue
                if not abort.cause.startswith(faults.CAUSE):   # an injected one keeps its name
                    abort = AbortSection(f"inconsistent read raised {type(exc).__name__}",
                                         abort.marker)
                token = _after_abort(tx, abort, exc)
                _back_off(aborts)
                continue
            except BaseException:
                CURRENT.tx = None    # a failure of the engine's own: no section runs on
                tx.drop_clock_readings()
                raise
            _end(tx)
            run_deferred_finalizers()
            raise exc.with_traceback(without_engine_frames(exc.__traceback__))
        CURRENT.tx = None
        _end(tx)
        run_deferred_finalizers()
        return result


#: The doom of the throwaway transaction _after_abort runs finalizers in:
#: whatever dies then belongs to the aborted attempt.
_DROPPED = AbortSection("finalizing an aborted attempt")


class _Finalizers(threading.local):
    """Finalizer calls put off until the running section has ended: (action, shown as)."""

    def __init__(self) -> None:
        self.pending: list[tuple[Callable[[], Any], Any]] = []
        #: True while run_deferred_finalizers runs them on this thread.
        self.draining = False


_finalizers = _Finalizers()


def run_deferred_finalizers() -> bool:
    """Run the finalizers deferred by the section that just ended, each outside it.

    Returns whether there were any. Not re-entered: each finalizer is a
    section, whose end would run the next one from inside it (a thousand
    put off at once, a list of objects cleared by one commit, nested a
    thousand deep); the loop here takes what they put off in turn.
    """
    if _finalizers.draining:
        return False
    ran = False
    _finalizers.draining = True
    try:
        while _finalizers.pending:
            action, shown_as = _finalizers.pending.pop(0)
            ran = True
            try:
                action()
            except BaseException:
                # As CPython does with whatever a finalizer raises, SystemExit
                # and KeyboardInterrupt included: reported, never propagated
                # into the code that happened to drop the object.
                report_unraisable(sys.exc_info(), shown_as)
    finally:
        _finalizers.draining = False
    return ran


#: The engine's locks a finalizer could need (``threading.RLock``, which
#: knows its owner): see :func:`finalizer_safe_lock`.
_LOCKS_FINALIZERS_NEED: "weakref.WeakSet[Any]" = weakref.WeakSet()


def finalizer_safe_lock() -> Any:
    """A lock for the engine's own code, that puts off this thread's finalizers while held.

    Free-threaded CPython frees an object on the thread that owns it at
    whatever point that thread next checks for pending work, which may be
    inside a ``with lock:`` block of the engine's own. A ``__del__`` that
    calls ``transaction.add`` would then wait for the queue lock its own
    thread holds, for ever (or, as a section, wait for W while its thread
    holds a lock W's holder needs). Finalizers that fire while the thread
    owns such a lock wait in its list (``_finalize_now_or_after``), which
    the holder runs with :func:`run_deferred_finalizers` once it has let
    go. An ``RLock``, for its ownership, which its C code keeps: a wrapper
    in Python could be left half-acquired by a Ctrl-C.
    """
    lock = threading.RLock()
    _LOCKS_FINALIZERS_NEED.add(lock)
    return lock


def _holding_a_lock_finalizers_need() -> bool:
    return any(lock._is_owned() for lock in list(_LOCKS_FINALIZERS_NEED))


class _Unraisable:
    """What an application's ``sys.unraisablehook`` gets: an exception from a finalizer."""

    def __init__(self, info: tuple, obj: Any, err_msg: str = "Exception ignored in") -> None:
        self.exc_type, self.exc_value, self.exc_traceback = info
        self.err_msg = err_msg
        self.object = obj


def report_unraisable(info: tuple, obj: Any) -> None:
    """Report a finalizer's exception as CPython does, through ``sys.unraisablehook``.

    CPython's own hook accepts only the ``UnraisableHookArgs`` it makes
    itself, so its report is written here; an application's hook gets
    the same fields. Nothing a hook raises escapes (CPython reports it).
    """
    hook = sys.unraisablehook
    try:
        if hook is not sys.__unraisablehook__:
            hook(_Unraisable(info, obj))
            return
    except Exception:
        info, obj = sys.exc_info(), hook
        _write_unraisable(info, obj, "Exception ignored in sys.unraisablehook")
        return
    _write_unraisable(info, obj, "Exception ignored in")


def _write_unraisable(info: tuple, obj: Any, err_msg: str) -> None:
    stream = sys.stderr
    if stream is None:
        return
    try:
        heading = f"{err_msg}: {obj!r}\n"
    except Exception:
        heading = f"{err_msg}: <object repr() failed>\n"
    # One write: reports of finalizers run on two threads at once would
    # interleave line by line, which a serial run never shows.
    stream.write(heading + "".join(traceback.format_exception(*info)))
    stream.flush()


def _end(tx: Transaction) -> None:
    """A committed section: count it, unlock its in-place writes, run what waited for it."""
    tx.stats.commits += 1
    stmlog.record(stmlog.STM_TRANSACTION_COMMIT, tx.stats.thread_num)
    try:
        if tx.inevitable:
            release_held()
    finally:
        tx.leave_w()            # (never left held: every other thread would wait)
    actions, tx.after_commit = tx.after_commit, []
    actions += tx.at_end
    tx.at_end = []
    # What undoes the attempt and the response it held refer back to the
    # transaction: dropped here, the request's objects are freed by their
    # reference counts instead of waiting for a (stop-the-world) collection.
    tx.on_abort = []
    tx.held_response = tx.subject = None
    for action in actions:
        action()


def without_engine_frames(tb: Optional[TracebackType]) -> Optional[TracebackType]:
    """The traceback minus tornado-stm's frames (barriers, sections), so it shows the user's code."""
    kept = []
    while tb is not None:
        if not is_engine_code(tb.tb_frame.f_code):
            kept.append(tb)
        tb = tb.tb_next
    for outer, inner in zip(kept, kept[1:]):
        outer.tb_next = inner
    if kept:
        kept[-1].tb_next = None
        return kept[0]
    return None


def _back_off(aborts: int) -> None:
    """Randomized exponential back-off, so that conflicting sections stop colliding."""
    time.sleep(random.uniform(0, min(BACKOFF_MAX, BACKOFF_BASE * (1 << aborts))))


def _after_abort(tx: Transaction, abort: AbortSection,
                 raised: Optional[BaseException] = None) -> Any:
    """Drop an aborted attempt, count and log the abort, give W back; returns the next token.

    ``raised`` is the exception that unwound the attempt, if not ``abort``:
    its traceback keeps the attempt's frames, and with them the objects it
    made, alive. Freed later, outside any section, their finalizers
    (``__del__``, a generator's ``finally``, ``weakref.finalize``) would
    commit writes for objects no serial run ever made. They are freed here,
    with the attempt's logs, while a throwaway transaction is current: their
    writes are dropped, and one that needs to be inevitable (I/O in a
    finalizer) aborts instead.
    """
    sink = Transaction(tx.stats, False, None)
    sink.doomed = _DROPPED
    # What the attempt made, by id: only their finalizers are the attempt's.
    sink.made = tx.everything_made()
    CURRENT.tx = sink
    try:
        (raised or abort).__traceback__ = None
        tx.discard()
        # What those finalizers made in the sink is the aborted attempt's
        # too: it dies here, its own finalizers' writes dropped, not later
        # as sections of their own that would commit.
        sink.release_private()
    finally:
        CURRENT.tx = None
        sink.drop_clock_readings()
    tx.stats.aborts[abort.cause] += 1
    if abort.marker:
        stmlog.record(stmlog.STM_CONTENTION_WRITE_READ, tx.stats.thread_num, abort.marker)
    stmlog.record(stmlog.STM_TRANSACTION_ABORT, tx.stats.thread_num)
    return tx.release_for_retry()


_module_body = MODULE_BODY


@contextlib.contextmanager
def module_body() -> Iterator[None]:
    """While an instrumented module's top-level code runs: calls are not sections.

    A script's ``main()`` called from its last line, or ``app = make_app()``
    at import, is the single-threaded part of the program, as in PyPy-STM:
    it runs as plain code (writes in place under W, versioned so that
    sections notice), and may call ``transaction.run()``, whose workers
    start sections of their own.
    """
    _module_body.depth += 1
    try:
        yield
    finally:
        _module_body.depth -= 1


#: ``threading.Thread.start`` as the standard library defines it.
_thread_start = threading.Thread.start


def start_thread(thread: threading.Thread) -> None:
    """``thread.start()`` called by instrumented code: the thread runs its code as
    plain code, as a script's module body does, not as one section.

    A thread's target is a program of its own (a progress monitor polling a
    counter, a refresher that sleeps between rounds): as one section it
    would never see other threads' commits, or hold W for ever once it
    turned inevitable. Started by a holder of W (an inevitable section that
    then ``join()``s it), the thread borrows that W for its writes while
    the holder keeps it: they become part of the holder's.
    """
    thread.run = as_plain_code_on_a_helper(thread.run)  # type: ignore[method-assign]
    _thread_start(thread)


def as_plain_code_on_a_helper(fn: F) -> F:
    """``fn`` for another thread to run as plain code, borrowing the W this
    thread holds now, if it holds it, while that hold lasts (see
    :func:`start_thread`; a task handed to a thread pool, which the section
    then waits for, is run so too)."""
    loan = WORLD_LOCK.lend() if WORLD_LOCK.held_by_current_thread() else None

    def run_as_plain_code(*args: Any, **kwargs: Any) -> Any:
        if loan is not None:
            WORLD_LOCK.borrow(loan)
        try:
            with module_body():
                return fn(*args, **kwargs)
        finally:
            if loan is not None:
                # A pool's thread goes on to other work (a done-callback run
                # as a section): it must not commit inside the lender's hold.
                WORLD_LOCK.stop_borrowing()

    return run_as_plain_code  # type: ignore[return-value]


@contextlib.contextmanager
def beside_the_workers() -> Iterator[None]:
    """While a thread waits in ``transaction.run()`` for its workers: it is not running its module body.

    What runs on it meanwhile runs beside the workers, not as the
    single-threaded part of the program: chiefly the ``__del__`` of an
    object made there that a worker's commit dropped (free-threaded CPython
    frees an object on the thread that made it, whenever that thread next
    checks for pending work, wherever it is: inside the engine's own code,
    holding one of its locks, maybe). As plain code, ``FREED += 1`` would
    read and write without W between two of the workers' commits and lose
    one of theirs; as a section started there, it could wait for a lock
    the interrupted code holds. So finalizers wait (``_finalize_now_or_after``)
    and run as sections of their own when the waiting thread calls
    :func:`run_deferred_finalizers`, at a safe point, and when it is done.
    """
    depth, _module_body.depth = _module_body.depth, 0
    waiting, _module_body.waiting = _module_body.waiting, True
    try:
        yield
    finally:
        _module_body.depth, _module_body.waiting = depth, waiting
        run_deferred_finalizers()


def entry(fn: F) -> F:
    """Make ``fn`` start an atomic section when called from outside any section.

    A generator, coroutine or async generator function cannot: its steps
    run later, driven by whoever resumes them. It gets :func:`_steps_entry`
    instead, so that each step run outside a section holds W.
    """
    code = getattr(fn, "__code__", None)
    if code is not None and code.co_flags & STEPPED_FLAGS:
        return _steps_entry(fn)  # type: ignore[return-value]
    if getattr(fn, "__name__", None) == "__del__":
        return _finalizer_entry(fn)  # type: ignore[return-value]

    def section_entry(*args: Any, **kwargs: Any) -> Any:
        tx = CURRENT.tx
        if tx is not None:
            # (the C call barrier and entry_target need ``fn`` to be this
            # wrapper's one closure cell: nothing else is captured)
            if args and fn.__name__ == "__init__" and not tx.inevitable:
                note_if_built_here(tx, args[0])
            # Called back by library code inside a section. Run in place, the
            # library may change what it gets back, and (library Python, not
            # sorted's C calling a key function) what the callback put into
            # its arguments (box.append(STATS)): those are held.
            filled = _arguments_filled(args, kwargs) \
                if tx.inevitable and _library_python_above() else None
            result = fn(*args, **kwargs)
            if tx.inevitable:
                hold_handed_back(tx, result, *(filled() if filled is not None else ()))
            return result
        if _module_body.depth or _steps_running.depth:
            # Plain code, or a step (called back from C: sorted's key=, an
            # f-string's __str__): part of it, its barriers in direct mode.
            # Run as a section it would give the step's W up meanwhile.
            return fn(*args, **kwargs)
        return run_section(fn, args, kwargs)

    wraps_with_defaults(section_entry, fn)
    return section_entry  # type: ignore[return-value]


#: Codes of generator and coroutine functions whose steps take W at their
#: start (entry_with_shared_cells).
STEPS_TAKING_W_FIRST: set[Any] = set()


def entry_with_shared_cells(fn: F) -> F:
    """:func:`entry` for a generator or coroutine function that reassigns a
    local its nested functions read (``done = i`` with ``def progress():
    return done, total`` published): those reads have no barrier, so a
    closure called by another thread's step could see one of two stores;
    its steps hold W from their start, not from their first barrier."""
    STEPS_TAKING_W_FIRST.add(fn.__code__)
    return entry(fn)


def wraps_with_defaults(wrapper: Callable[..., Any], fn: Callable[..., Any]) -> None:
    """``functools.update_wrapper``, and the defaults too: code that reads
    ``f.__defaults__`` sees the function's (rebinding them changes the
    wrapper's only, which the function does not use)."""
    functools.update_wrapper(wrapper, fn)
    wrapper.__defaults__ = getattr(fn, "__defaults__", None)
    wrapper.__kwdefaults__ = getattr(fn, "__kwdefaults__", None)


def _finalizer_entry(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``__del__``: CPython calls it when the object dies, wherever that is.

    An object the running section made is part of that section (its death
    and its finalizer go, or stay, with the attempt). Any other object dies
    for good (its last reference went at a commit's publication, or a cycle
    was collected while an unrelated section ran): its finalizer runs once,
    as a section of its own, after the running section has ended, so that
    an abort of that section can neither undo nor repeat it.
    """

    def finalizer_entry(self: Any) -> Any:
        if CURRENT is None:                  # the interpreter is finalizing this module
            return fn(self)
        if CURRENT.tx is None and _module_body.depth:
            return fn(self)
        # A section of its own, or a plain call inside the running section
        # (run_section); put off, the object is resurrected until it runs.
        return _finalize_now_or_after(functools.partial(run_section, fn, (self,)), fn, self)

    wraps_with_defaults(finalizer_entry, fn)
    INSTRUMENTED_CODES.add(finalizer_entry.__code__)
    return finalizer_entry


#: ``weakref.finalize.__call__`` as the standard library defines it.
_finalize_call = weakref.finalize.__call__


def _finalize_now_or_after(action: Callable[[], Any], shown_as: Any, obj: Any = None) -> Any:
    """Run a finalizer's ``action`` now, or put it off to the end of the running section.

    A finalizer runs where its object dies, which inside a section is
    usually not that section's doing (a commit's publication dropped the
    last reference, a cycle was collected): its writes would join that
    section, and be lost with it if it aborts. It runs now outside any
    section (except on a thread waiting in ``transaction.run()``:
    beside_the_workers), when the section cannot abort (it is inevitable,
    and is not writing its log to the heap), when the
    dying object (``obj``, if known) was made by the running attempt or, in
    the throwaway transaction an aborted attempt's objects die in, by the
    aborted attempt (their finalizers' writes are dropped with them; the
    sink's ``made`` holds that attempt's, registered from ``__new__`` on:
    calls._build_registered). A shared object whose last reference the
    aborted attempt held is finalized after the section, as anywhere else.
    Put off, it returns None.
    """
    tx = CURRENT.tx if CURRENT is not None else None
    if _holding_a_lock_finalizers_need():
        now = False                             # (see finalizer_safe_lock)
    elif tx is None:
        now = not _module_body.waiting          # (see beside_the_workers)
    else:
        # Never while a commit writes its log to the heap (its publication
        # dropped the last reference): the finalizer's in-place writes could
        # be overwritten by the rest of the log (a counter that __del__ bumps).
        now = not tx.publishing and (
            tx.inevitable
            # (garbage the GC collects meanwhile is not the attempt's: obj tells)
            or (obj is None and (tx.releasing_own or tx.doomed is _DROPPED))
            or (obj is not None and tx.made_by(obj)))
    if now:
        if tx is None or tx.inevitable:
            try:
                return action()
            except BaseException:
                # Reported here, as CPython would, in one write: CPython's
                # own report, written piece by piece, could interleave with
                # another thread's (reports a serial run never mixes).
                report_unraisable(sys.exc_info(), shown_as)
                return None
        try:
            return action()
        except AbortSection as abort:
            # The attempt it runs in is done for (tx.doomed says so, and its
            # next barrier or its commit aborts it): what the finalizer did
            # goes with the attempt, and the abort must not leave __del__ or
            # a weakref callback, where CPython reports it as unraisable.
            if tx.doomed is None:
                tx.doomed = abort
            elif abort is tx.doomed:
                # (one instance raised again and again, _DROPPED among them:
                # its traceback would keep the frames and their objects alive)
                abort.__traceback__ = None
            return None
        except BaseException:
            # (SystemExit and KeyboardInterrupt too: CPython reports those
            # from a finalizer as well.)
            # Reported as CPython would, once the attempt commits: an attempt
            # that aborts (or one already aborted, whose objects die in the
            # sink) never ran its finalizer in any serial run.
            if tx.doomed is None:
                tx.defer(functools.partial(report_unraisable, sys.exc_info(), shown_as))
            return None
    _finalizers.pending.append((action, shown_as))
    return None


def _finalize_from_a_weakref(self: weakref.finalize, dead_ref: Any = None) -> Any:
    """``weakref.finalize.__call__``, called by the referent's death or by the program.

    The weakref machinery passes the dead reference: that call waits for
    the end of the running section, and the callback, an instrumented
    function, is then a section of its own. An explicit ``f()`` by the
    program is an ordinary call.
    """
    if dead_ref is None:
        return _finalize_call(self)
    # The referent is gone, but the finalize object says whose it was: the
    # attempt that made one made its referent too (or got it from shared
    # state, where it is not this attempt's to drop).
    return _finalize_now_or_after(functools.partial(_finalize_call, self, dead_ref), self, self)


def after_the_section(callback: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``callback`` for ``weakref.ref(obj, callback)``: run inside a section, it waits for its end."""

    def weakref_callback(dead_ref: Any) -> Any:
        return _finalize_now_or_after(functools.partial(callback, dead_ref), callback)

    return weakref_callback


def configure_from_environment() -> None:
    """Read ``$TORNADO_STM_MAX_ABORTS`` (:func:`tornado_stm.stm.start` does, once)."""
    global MAX_ABORTS
    MAX_ABORTS = count_from_environment("TORNADO_STM_MAX_ABORTS", 10)


#: ``weakref.finalize.__init__`` as the standard library defines it.
_finalize_init = weakref.finalize.__init__


def _finalize_made(self: weakref.finalize, obj: Any, func: Any, /, *args: Any,
                   **kwargs: Any) -> None:
    """``weakref.finalize.__init__``: a finalize object made in an optimistic
    section is the attempt's (C code may have made it: ``map(weakref.finalize,
    ...)``), so its callback goes with the attempt if it aborts."""
    _finalize_init(self, obj, func, *args, **kwargs)
    tx = CURRENT.tx if CURRENT is not None else None
    if tx is not None and not tx.inevitable:
        tx.note_made(self)


def watch_weakref_finalizers() -> None:
    """Have ``weakref.finalize`` callbacks wait for the end of the section their referent died in."""
    weakref.finalize.__call__ = _finalize_from_a_weakref  # type: ignore[method-assign]
    weakref.finalize.__init__ = _finalize_made  # type: ignore[method-assign]


def _start_from_plain_code(thread: threading.Thread) -> None:
    """``Thread.start`` where plain code of the application starts a thread
    (a module's top level: ``Thread(target=worker).start()`` at import, which
    the call barrier never sees, also when a section imports the module):
    the thread runs its code as plain code, as one started by instrumented
    code does (:func:`start_thread`), not as one endless section."""
    if _module_body.depth:
        thread.run = as_plain_code_on_a_helper(thread.run)  # type: ignore[method-assign]
    _thread_start(thread)


#: ``_thread.start_new_thread`` as the standard library defines it (threading
#: keeps its own reference, or starts threads another way).
START_NEW_THREAD = _thread.start_new_thread


def _start_new_thread_from_plain_code(function: Any, args: tuple, kwargs: Any = None) -> int:
    """``_thread.start_new_thread`` as :func:`_start_from_plain_code` does ``Thread.start``."""
    if _module_body.depth:
        function = as_plain_code_on_a_helper(function)
    return START_NEW_THREAD(function, args, *(() if kwargs is None else (kwargs,)))


def watch_thread_starts() -> None:
    """Have threads started by an instrumented module's top-level code run as plain code."""
    threading.Thread.start = _start_from_plain_code  # type: ignore[method-assign]
    _thread.start_new_thread = _start_new_thread_from_plain_code


def finalizer(fn: Any) -> Any:
    """``__del__ = fn`` in an instrumented class body: ``fn`` follows the
    finalizer rules of :func:`_finalizer_entry`, whatever its name (a
    ``def`` named ``__del__`` gets them from :func:`entry`). Also
    ``Resource.__del__ = fn`` after the class statement: which classes have
    finalized instances is then news."""
    forget_finalized()
    code = getattr(fn, "__code__", None)
    if code is ENTRY_CODE:
        return _finalizer_entry(entry_target(fn))
    return fn


# -- generators and coroutines: one step at a time under W -------------------
#
# A coroutine step cannot be rolled back (its frame cannot be copied), so
# instrumented code resumed outside any section runs in *direct mode*: its
# reads are plain and its writes go in place. That is serial only while the
# step holds W, as every committer does. On the shared loop framework code
# holds W already; with one loop per thread it does not, so the step takes
# W itself, from its first barrier that may touch shared state to its end:
# other threads' framework code and optimistic sections go on meanwhile,
# only their commits wait.
#
# Up to that first barrier the step has only run code that touches nothing
# shared: locals, constants, arithmetic on numbers, objects it creates, and
# calls of instrumented functions doing the same (every read or write of a
# shared object, every call of library code and every ``with`` goes through
# a barrier in instrumented code). Taking W there is the same as taking it
# at the start of the step, and an ``async def`` handler that awaits, then
# computes on what it has, computes on every core. The barriers see that W
# is still to be taken in ``CURRENT.step`` (``txn.take_w_for_step``; the C
# barriers check it in their prologue). The pure-Python barriers do not
# check each operation: without the C fast path a step takes W at its start.
#
# That argument holds only where the step resumes in instrumented code. A
# step that resumes inside library code -- an application coroutine
# suspended in ``await cond.wait()`` resumes in asyncio's ``Condition.wait``,
# which removes its waiter from the condition and takes its lock again --
# runs that code before any barrier, and the primitive is shared with the
# other loops (docs/semantics.md, limit 16). Such a step takes W at its
# start (:func:`_resumes_in_library_code`). Waiting on a future, on
# ``asyncio.sleep`` or ``asyncio.wait_for`` resumes in the application's
# own frame first (they touch only the step's own timer and future), and
# keeps the lazy W.

#: Generators, coroutines, async generators: their frames run in steps (and
#: need the call barrier, which marks the frame the section's own).
STEPPED_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR

#: Steps that took W lazily, and steps that ended without taking it (this
#: process, all threads; approximate under races, for tests and statistics).
STEP_COUNTS = {"took_w": 0, "without_w": 0}


#: sys.getrefcount of a put-off lookup in LazyW.__call__ when its call will
#: not come (its arguments raised): the list's, the loop's and the call's own.
#: One whose call is still to come is also on the frame's value stack.
_ABANDONED_LOOKUP_REFERENCES = 3


class LazyW:
    """``CURRENT.step`` while a step runs without W (see above): called by the
    first barrier that may touch shared state, it takes W for the rest of
    the step.

    It then makes the method lookups the step put off until their calls
    (``barriers.method_to_call``: ``self.write(render(rows))`` in an
    ``async def``), as of that moment: the arguments computed so far
    touched nothing shared, so the lookup reads what it would have read
    before them, and what they do from now on (rebinding the method, say)
    comes after it, as in plain Python.
    """

    __slots__ = ("took", "lookups")

    def __init__(self) -> None:
        self.took = False
        #: barriers.PendingMethod objects made before W, to be looked up when it is taken.
        self.lookups: list[Any] = []

    def __call__(self) -> None:
        CURRENT.step = None
        WORLD_LOCK.acquire()
        WORLD_LOCK.open_to_plain_code()
        self.took = True
        lookups, self.lookups = self.lookups, []
        for lookup in lookups:
            lookup.look_up()
            if lookup.error is not None and sys.getrefcount(lookup) > _ABANDONED_LOOKUP_REFERENCES:
                # The method went (another thread deleted it) while the
                # step computed its arguments, which touched nothing shared
                # so far: the lookup fails here, before what they do next,
                # as it fails before them in plain Python.
                raise lookup.error


def _step(resume: Callable[..., Any], *args: Any, w_first: bool = False) -> Any:
    """Run one step of a frame outside any section: under W from its first
    barrier that may touch shared state (see above) to its end."""
    tx = CURRENT.tx
    if tx is not None:
        value = resume(*args)
        if tx.inevitable and type(value) not in ATOM_TYPES and _library_python_above():
            # for d in app_generator(): d[key] += 1, run in place by library code
            hold_handed_back(tx, value)
        return value
    _steps_running.depth += 1
    try:
        if CURRENT.step is not None or WORLD_LOCK.held_by_current_thread():
            return resume(*args)        # in a step of its own, or under W already
        if not BARRIERS_CHECK_STEPS[0] or w_first or _resumes_in_library_code(resume.__self__):
            with WORLD_LOCK:
                WORLD_LOCK.open_to_plain_code()     # it runs in place, as an inevitable section
                try:
                    return _yielded_to_the_task(resume(*args))
                finally:
                    enter_clocks_read_in_place()
        take_w = LazyW()
        CURRENT.step = take_w
        try:
            return _yielded_to_the_task(resume(*args))
        finally:
            CURRENT.step = None
            if take_w.took:
                enter_clocks_read_in_place()
                WORLD_LOCK.release()
                STEP_COUNTS["took_w"] += 1
            else:
                STEP_COUNTS["without_w"] += 1
    finally:
        _steps_running.depth -= 1


class _StepsRunning(threading.local):
    """Per thread: how many steps of frames run outside sections are under
    way (``_step``; nested when a step resumes another frame): application
    code called back from C meanwhile is part of the step, not a section."""

    depth = 0


_steps_running = _StepsRunning()


#: Containers and instance dicts larger than this are not watched by
#: _arguments_filled (a callback's out-parameter is the library's own small one).
_WATCHED_SIZE = 256


def _arguments_filled(args: tuple, kwargs: dict) -> Callable[[], list]:
    """Before a callback runs: a function telling, after it, what the callback
    put into its arguments' top level (an item added to a list, a value set
    in a dict or on an object), by identity. Only those are new to the library:
    the arguments themselves (a handler's ``self``) were its own before."""
    # Copies made by C code, compared by identity: plain code of another
    # thread may be changing a holder now ("changed size during iteration"),
    # and an application key's __hash__/__eq__ must not run again.
    watched = []
    for arg in (*args, *kwargs.values()):
        if type(arg) in ATOM_TYPES:
            continue
        if isinstance(arg, (list, deque, set)) and len(arg) <= _WATCHED_SIZE:
            items = copy_of(arg)
            if items is not None:
                watched.append((arg, None, {id(item) for item in items}))
        else:
            namespace = arg if isinstance(arg, dict) else getattr(arg, "__dict__", None)
            if isinstance(namespace, dict) and len(namespace) <= _WATCHED_SIZE:
                pairs = _pairs_of(namespace, namespace is not arg)
                if pairs is not None:
                    watched.append((namespace, {id(key): (key, value) for key, value in pairs},
                                    namespace is not arg))

    def filled() -> list:
        added = []
        for holder, before, ids_or_instance in watched:
            if before is None:
                items = copy_of(holder) or ()
                added += [item for item in items if id(item) not in ids_or_instance]
            else:
                pairs = _pairs_of(holder, ids_or_instance) or ()
                added += [value for key, value in pairs
                          if before.get(id(key), (None, _MISSING))[1] is not value]
        return added
    return filled


def _pairs_of(d: dict, instance_dict: bool) -> Optional[list]:
    """A dict's items, copied; None if it kept changing. An instance's
    ``__dict__`` is read item by item, not merged: on free-threaded CPython
    before 3.13.6 (gh-132617) a merge checks the class's shared keys, which
    another thread may be extending (see response._Recording)."""
    if not instance_dict:
        copied = copy_of(d)
        return None if copied is None else list(copied.items())
    for _ in range(3):
        try:
            return list(d.items())
        except RuntimeError:
            continue
    return None


_MISSING = object()


def _library_python_above() -> bool:
    """In an entry wrapper or in :func:`_step`: True when the code that called the
    callback (or resumed the generator), past the engine's frames (step
    wrappers, a call barrier), is Python code that is not instrumented (C
    code calling back leaves no frame: its caller is asked)."""
    frame = application_frame(sys._getframe(2))[0]
    return frame is not None and frame.f_code not in INSTRUMENTED_CODES


def of_another_loop(awaitable: Any) -> bool:
    """True for an asyncio future of another event loop than the running one
    (a loop per thread: ``serve --loop per-thread``)."""
    if not hasattr(type(awaitable), "_asyncio_future_blocking"):
        return False
    get_loop = getattr(awaitable, "get_loop", None)
    if get_loop is None:
        return False
    from asyncio import events
    return get_loop() is not events._get_running_loop()


def on_this_loop(future: Any) -> Any:
    """A future of the running loop with the outcome of ``future``, of another loop.

    With one loop per thread, a future made on one loop and awaited by a
    task of another (a single-flight cache of futures in a module dict)
    is refused by asyncio's task ("attached to a different loop"), where
    the one loop of stock Tornado would simply wait. The task waits on a
    future of its own loop instead. asyncio's futures are not thread-safe,
    so the shared future is touched by its own loop's thread only: that
    thread adds the callback that hands the outcome over. Cancelling the
    waiting task cancels the shared future, as it would on one loop.
    """
    from asyncio import events
    loop = events._get_running_loop()
    if loop is None or future.done():
        return future
    owner = future.get_loop()
    bridge = loop.create_future()

    def settle(source: Any) -> None:        # on the owner's thread
        loop.call_soon_threadsafe(_copy_outcome, source, bridge)

    def cancel_source(waiter: Any) -> None:   # on the waiting task's thread
        if waiter.cancelled():
            owner.call_soon_threadsafe(future.cancel)

    owner.call_soon_threadsafe(future.add_done_callback, settle)
    bridge.add_done_callback(cancel_source)
    return bridge


def _yielded_to_the_task(yielded: Any) -> Any:
    """What a step hands its task: a future of its own loop.

    Instrumented code awaits another loop's future through
    ``barriers.awaited``, which swaps it for one of this loop before its
    iterator runs. Library code called by the application does not
    (``await asyncio.wait_for(shared_future, 1)``): its iterator has marked
    the shared future as awaited, which this undoes before swapping.
    """
    if of_another_loop(yielded) and yielded._asyncio_future_blocking:
        yielded._asyncio_future_blocking = False
        bridge = on_this_loop(yielded)
        bridge._asyncio_future_blocking = True
        return bridge
    return yielded


def _copy_outcome(source: Any, bridge: Any) -> None:
    if bridge.done():
        return
    if source.cancelled():
        bridge.cancel()
    elif source.exception() is not None:
        bridge.set_exception(source.exception())
    else:
        bridge.set_result(source.result())


def _awaited_by(frame: Any) -> Any:
    """What a suspended coroutine or generator (or step wrapper) is waiting on."""
    if type(frame) is _StepsUnderW:
        return frame._frame
    awaited = getattr(frame, "cr_await", None)
    if awaited is None:
        awaited = getattr(frame, "gi_yieldfrom", None)
    return awaited


def _resumes_in_library_code(frame: Any) -> bool:
    """True when resuming ``frame`` first runs code that is not instrumented.

    Follows the chain of awaits down from the application frame to the
    innermost one: instrumented coroutines and the step wrappers pass the
    resumption on; a future's iterator hands it straight back to the
    frame above; any other awaitable (a library coroutine, an async
    generator's ``asend``, an object's own ``__await__``) runs its own code
    first.
    """
    resumes_locally = codes_resuming_locally()
    while True:
        awaited = _awaited_by(frame)
        if awaited is None or type(awaited) in resumes_locally:
            return False
        if type(awaited) is not _StepsUnderW:
            code = getattr(awaited, "cr_code", None) or getattr(awaited, "gi_code", None)
            if code is None or (code not in INSTRUMENTED_CODES and code not in resumes_locally):
                return True
        frame = awaited


_RESUMING_LOCALLY: set[Any] = set()


def codes_resuming_locally() -> set[Any]:
    """The step wrappers' and some asyncio coroutines' codes, and future iterator types.

    Computed by :func:`tornado_stm.stm.start` (or on first use): it makes
    (and closes) an event loop.
    """
    if not _RESUMING_LOCALLY:
        import asyncio
        import asyncio.futures
        loop = asyncio.new_event_loop()
        try:
            future = loop.create_future()
            kinds = {type(future.__await__())}
            future.cancel()
        finally:
            loop.close()
        sleep0 = getattr(asyncio.tasks, "__sleep0", None)     # asyncio.sleep(0)
        if sleep0 is not None:
            kinds.add(sleep0.__code__)
        kinds.update({asyncio.sleep.__code__, asyncio.wait_for.__code__,
                      asyncio.futures._PyFuture.__await__.__code__,
                      _coroutine_steps.__code__, _generator_steps.__code__})
        _RESUMING_LOCALLY.update(kinds)
    return _RESUMING_LOCALLY


class _StepsUnderW:
    """An iterator delegating to a generator or a coroutine, one step under W at a time.

    ``yield from`` and ``await`` forward ``send``/``throw``/``close`` to it,
    and its ``StopIteration`` carries the frame's return value out.
    """

    # (a weak reference tells an attempt's own from another at the same
    # address: txn.remember_made)
    __slots__ = ("_frame", "_made_in", "_w_first", "closed_with", "__weakref__")

    def __init__(self, frame: Any, shared_frame: bool = False, w_first: bool = False) -> None:
        self._frame = frame
        #: Its steps take W at their start (entry_with_shared_cells).
        self._w_first = w_first or getattr(frame, "cr_code", None) in STEPS_TAKING_W_FIRST \
            or getattr(frame, "gi_code", None) in STEPS_TAKING_W_FIRST
        #: For a generator's frame, which any holder may resume: the step
        #: that made it (see take_w_to_resume); None for a coroutine's, which
        #: only its one awaiter resumes.
        self._made_in = _made_in_this_step() if shared_frame else None
        #: What close() got from the frame (its return value on GeneratorExit).
        self.closed_with: Any = None
        tx = CURRENT.tx
        if tx is not None:   # made by this attempt: see close()
            tx.mark_private(self)

    def __iter__(self) -> "_StepsUnderW":
        return self

    __await__ = __iter__

    def __next__(self) -> Any:
        take_w_to_resume(self._made_in, self._w_first)
        return _step(self._frame.send, None, w_first=self._w_first)

    def send(self, value: Any) -> Any:
        take_w_to_resume(self._made_in, self._w_first)
        return _step(self._frame.send, value, w_first=self._w_first)

    def throw(self, *exc: Any) -> Any:
        take_w_to_resume(self._made_in, self._w_first)
        return _step(self._frame.throw, *exc, w_first=self._w_first)

    def close(self) -> None:
        if _step is None:
            # The interpreter is finalizing a generator left suspended (a
            # script's module-level one): this module's globals are gone, and
            # so is every other thread.
            self._frame.close()
            return
        # Collected inside a section that did not make it (a program's own
        # close() of such a generator has made the section inevitable
        # first): the frame's ``finally`` runs after that section, as a step.
        self.closed_with = _finalize_now_or_after(
            functools.partial(_step, self._frame.close, w_first=self._w_first), self._frame, self)


count_as_finalized(_StepsUnderW)


#: ``_made_in`` of a generator made outside any step that has not taken W
#: (in a section, in plain code, or in a step holding W already).
_NOT_IN_A_STEP = object()


def _made_in_this_step() -> Any:
    return CURRENT.step or _NOT_IN_A_STEP


def take_w_to_resume(made_in: Any, w_first: bool = False) -> None:
    """Before resuming a generator or async generator made in ``made_in``: in a
    step that has not taken W, take it unless that step made the generator.

    Another thread's step may hold the same generator (a module-level
    ``async for v in TICKETS``): resuming it is touching shared state, as
    ``next()`` on a shared iterator is. One the step made itself (``for x
    in self.rows()``, its first iteration) is its own so far.
    """
    step = CURRENT.step
    if step is not None and (w_first or made_in is not None and step is not made_in):
        step()


def _generator_steps(frame: Any) -> Any:
    steps = _StepsUnderW(frame, shared_frame=True)
    try:
        return (yield from steps)
    except GeneratorExit:
        # close(): what the frame returned on GeneratorExit is close()'s
        # value (3.13), which ``yield from`` drops
        value = steps.closed_with
        if value is None:
            raise
        return value


async def _coroutine_steps(frame: Any, w_first: bool = False) -> Any:
    return await _StepsUnderW(frame, w_first=w_first)


_ASYNC_GENERATOR_FACTS = frozenset({"__name__", "__qualname__", "ag_running", "ag_frame", "ag_code",
                                    "ag_await"})


class _AsyncGeneratorSteps:
    """An async generator whose steps (``__anext__``, ``asend``...) run under W.

    Left suspended and dropped (``break`` out of ``async for``), it is closed
    by a task on the loop that iterated it, as asyncio's finalizer hook
    closes one, but in steps: its ``finally`` runs under W like the rest of
    its code (asyncio's hook would run it as plain code, racing the steps of
    other loops).
    """

    __slots__ = ("_agen", "_made_in", "_loop")

    def __init__(self, agen: Any) -> None:
        self._agen = agen
        self._made_in = _made_in_this_step()
        self._loop: Any = None

    def __aiter__(self) -> "_AsyncGeneratorSteps":
        return self

    def __getattr__(self, name: str) -> Any:
        # What an async generator tells about itself: the application's one's.
        if name in _ASYNC_GENERATOR_FACTS:
            return getattr(self._agen, name)
        raise AttributeError(f"{type(self._agen).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        return repr(self._agen)

    def _resumed(self) -> Any:
        take_w_to_resume(self._made_in)
        if self._loop is None:
            self._loop = _running_loop()
        return self._agen

    def __anext__(self) -> Any:
        return _async_generator_step(self._agen, self._resumed().__anext__())

    def asend(self, value: Any) -> Any:
        return _async_generator_step(self._agen, self._resumed().asend(value))

    def athrow(self, *exc: Any) -> Any:
        return _async_generator_step(self._agen, self._resumed().athrow(*exc))

    def aclose(self) -> Any:
        return _async_generator_step(self._agen, self._resumed().aclose())

    def __del__(self) -> None:
        agen, loop = self._agen, self._loop
        if agen.ag_frame is None or agen.ag_running:
            return                      # done with
        if loop is None:
            # Driven by hand, with no loop: plain Python closes it where it
            # dies, as a generator is (_StepsUnderW.close), in steps.
            _finalize_now_or_after(functools.partial(_close_by_hand, agen), agen, self)
            return
        if loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(loop.create_task, _async_generator_step(agen, agen.aclose()))
        except RuntimeError:            # the loop is closed: asyncio's hook is too late as well
            pass


class _ClosedInSteps:
    """Stands in for an instrumented async generator in a loop's
    ``shutdown_asyncgens``: its ``aclose()`` runs in steps."""

    __slots__ = ("agen",)

    def __init__(self, agen: Any) -> None:
        self.agen = agen

    def aclose(self) -> Any:
        return _async_generator_step(self.agen, self.agen.aclose())

    def __repr__(self) -> str:
        return repr(self.agen)


_asyncio_shutdown_asyncgens = asyncio.BaseEventLoop.shutdown_asyncgens


async def _shutdown_asyncgens_in_steps(loop: asyncio.BaseEventLoop) -> None:
    """``BaseEventLoop.shutdown_asyncgens`` (the end of ``asyncio.run``): the
    application's async generators still open are closed in steps, their
    ``finally`` under W, as a dropped one is (_AsyncGeneratorSteps)."""
    open_ones = loop._asyncgens        # type: ignore[attr-defined]
    if any(getattr(agen, "ag_code", None) in INSTRUMENTED_CODES for agen in list(open_ones)):
        # asyncio only lists, counts and clears the set it closes
        loop._asyncgens = {                                  # type: ignore[attr-defined]
            _ClosedInSteps(agen) if agen.ag_code in INSTRUMENTED_CODES else agen
            for agen in list(open_ones)}
        try:
            return await _asyncio_shutdown_asyncgens(loop)
        finally:
            loop._asyncgens = weakref.WeakSet()             # type: ignore[attr-defined]
    return await _asyncio_shutdown_asyncgens(loop)


def watch_async_generator_shutdown() -> None:
    """Loops close the application's async generators left open in steps."""
    asyncio.BaseEventLoop.shutdown_asyncgens = _shutdown_asyncgens_in_steps  # type: ignore[method-assign]


def _async_generator_step(agen: Any, awaitable: Any) -> Any:
    """``awaitable`` (``agen.__anext__()``, ``asend``, ``athrow``, ``aclose``) run in steps."""
    return _coroutine_steps(awaitable, agen.ag_code in STEPS_TAKING_W_FIRST)


def _close_by_hand(agen: Any) -> None:
    """Close a dropped async generator no loop ran, at once: its ``finally`` in steps."""
    closing = _async_generator_step(agen, agen.aclose())
    try:
        closing.send(None)
    except StopIteration:
        return
    closing.close()
    # it awaited in its finally, where nothing can wait for it: as plain Python reports it
    raise RuntimeError("async generator ignored GeneratorExit")


def _running_loop() -> Any:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _steps_entry(fn: Callable[..., Any]) -> Callable[..., Any]:
    flags = fn.__code__.co_flags
    if flags & inspect.CO_COROUTINE:
        def coroutine_entry(*args: Any, **kwargs: Any) -> Any:
            frame = fn(*args, **kwargs)
            return _named_as(_coroutine_steps(frame), frame)
        wrapper = coroutine_entry
    elif flags & inspect.CO_ASYNC_GENERATOR:
        def async_generator_entry(*args: Any, **kwargs: Any) -> Any:
            return _AsyncGeneratorSteps(fn(*args, **kwargs))
        wrapper = async_generator_entry
    else:
        def generator_entry(*args: Any, **kwargs: Any) -> Any:
            frame = fn(*args, **kwargs)
            return _named_as(_generator_steps(frame), frame)
        wrapper = generator_entry
    wraps_with_defaults(wrapper, fn)
    if flags & inspect.CO_COROUTINE:
        _mark_coroutine_function(wrapper)
    return wrapper


def _named_as(steps: Any, frame: Any) -> Any:
    """The generator or coroutine that runs ``frame`` in steps, named as ``frame``
    (``repr()``, ``__name__``, ``__qualname__``: the application's function's)."""
    steps.__name__ = frame.__name__
    steps.__qualname__ = frame.__qualname__
    return steps


def _mark_coroutine_function(wrapper: Callable[..., Any]) -> None:
    """``inspect``/``asyncio.iscoroutinefunction(wrapper)`` stay true, as for the original."""
    mark = getattr(inspect, "markcoroutinefunction", None)   # 3.12+
    if mark is not None:
        mark(wrapper)
    else:
        import asyncio.coroutines
        wrapper._is_coroutine = asyncio.coroutines._is_coroutine  # type: ignore[attr-defined]


def entry_target(wrapper: Callable[..., Any]) -> Callable[..., Any]:
    """The function an entry wrapper wraps: its closure's one cell.

    Not ``__wrapped__``: an application decorator written with
    ``functools.wraps(f)`` sets that to ``f`` on its own wrapper (which is
    itself entry-wrapped), and the call barrier would skip the decorator.
    """
    return wrapper.__closure__[0].cell_contents  # type: ignore[index]


#: The code of every entry wrapper: the call barrier recognizes wrapped
#: functions by it and calls ``entry_target(f)`` directly.
ENTRY_CODE = entry(len).__code__
INSTRUMENTED_CODES.add(ENTRY_CODE)
# The step wrappers are called as they are (their result is the frame the
# section then owns); they count as instrumented code for the call barrier.


def _sample_generator() -> Any:
    yield


async def _sample_coroutine() -> None:
    pass


async def _sample_async_generator() -> Any:
    yield


for _sample in (_sample_generator, _sample_coroutine, _sample_async_generator):
    INSTRUMENTED_CODES.add(_steps_entry(_sample).__code__)

