"""The call policy of an application's calls that put work on an event loop.

``loop.call_soon(f)``, ``IOLoop.current().add_callback(f)``,
``call_later``, ``create_task``, a timer's ``cancel()``: the engine does
not know these library methods, so by default a section calling one
becomes inevitable, and code already holding W (a coroutine step, an
inevitable section) has :mod:`tornado_stm.stm.reach` walk and hold all
the state the call is handed -- the event loop, its handles, selector,
connections and application: thousands of objects on every call, and
past the walk's budget every overlapping section aborts.

None of that is needed. These methods change only the loop's own queues
(its ready deque, its timer heap), which framework code alone reads and
no section reads through the barriers; the callback they are given runs
later, as a section of its own when it is application code. So:

* holding W, they run in place, with nothing held;
* in an optimistic section, Tornado's ``add_callback``, ``spawn_callback``
  and ``add_future`` (of a future: anything else raises at once, as in
  plain Tornado) are queued to be made when the section commits, or when
  it turns inevitable, in order with what else waited for that (never if
  it aborts): they return nothing and cannot fail, and the callback could
  not run before the section's end in a serial run either. The others
  give back a handle or task the section may use at once, or can be
  undone by a later call of the same section (``remove_done_callback``
  after ``add_done_callback``), so the section becomes inevitable first
  and then calls them in place.

The callback itself must appear serial when it runs. Application code
does (an instrumented function called from the loop starts a section of
its own), and so does the framework's (a future's ``set_result``). But a
library callable the application hands over -- ``add_callback(EVENTS.append,
x)``, ``call_later(60, CACHE.clear)``, a ``functools.partial`` of one --
would change shared state in place from the loop, outside every section,
and an optimistic section that read the old state would commit over it
(a lost update). Such a callback is wrapped to run as a section of its
own, its call made through the call barrier (:func:`in_a_section`).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any, Callable

import tornado.concurrent
import tornado.ioloop
import tornado.platform.asyncio
from tornado.log import app_log

from tornado_stm.stm import policy, run_section
from tornado_stm.stm.specials import (handing_work_to_a_thread, is_application_code,
                                      through_the_call_barrier)
from tornado_stm.stm.worldlock import WORLD_LOCK

#: asyncio's methods that schedule work on a loop (or drop it from one), and
#: where their callback is among the arguments (None: they take none).
ASYNCIO_SCHEDULING = {"call_soon": 0, "call_soon_threadsafe": 0, "call_later": 1,
                      "call_at": 1, "create_future": None, "create_task": None}
#: Tornado's ``IOLoop`` methods that do, returning nothing: deferred to the section's commit.
TORNADO_DEFERRABLE = {"add_callback": 0, "spawn_callback": 0, "add_future": 1}
#: Tornado's ``IOLoop`` methods that do and return a handle.
TORNADO_SCHEDULING = {"add_timeout": 1, "call_later": 1, "call_at": 1, "remove_timeout": None}
#: Where callbacks come from that run as plain code without harm: the
#: framework's own (futures, handlers, locks) and output.
FRAMEWORK_MODULES = ("asyncio", "_asyncio", "tornado", "tornado_stm", "concurrent", "logging")

_installed_classes: set = set()
_install_lock = threading.Lock()


def install(loop_class: type) -> None:
    """Give the scheduling methods of ``loop_class`` (an asyncio event loop
    class), of asyncio's handles and of Tornado's IOLoops their policy;
    idempotent per class."""
    with _install_lock:
        if loop_class in _installed_classes:
            return
        _installed_classes.add(loop_class)
        for name, position in ASYNCIO_SCHEDULING.items():
            _register(getattr(loop_class, name, None), position, deferrable=False)
        if len(_installed_classes) > 1:
            return
        for handle_class in (asyncio.Handle, asyncio.TimerHandle):
            _register(handle_class.cancel, None, deferrable=False)
        # (the C future's method: a bound one maps to this descriptor)
        _register(asyncio.Future.add_done_callback, 0, deferrable=False)
        for ioloop_class in (tornado.ioloop.IOLoop, tornado.platform.asyncio.BaseAsyncIOLoop):
            for name, position in TORNADO_DEFERRABLE.items():
                _register(ioloop_class.__dict__.get(name), position, deferrable=True)
            for name, position in TORNADO_SCHEDULING.items():
                _register(ioloop_class.__dict__.get(name), position, deferrable=False)
            # Work for a thread pool, as asyncio's run_in_executor (specials).
            policy.register_special(ioloop_class.run_in_executor, handing_work_to_a_thread(
                (tornado.ioloop.IOLoop,), 1))
        for finder in (tornado.ioloop.IOLoop.current, tornado.ioloop.IOLoop.instance,
                       asyncio.get_event_loop):
            policy.register_special(finder, _finding_the_loop)


def _finding_the_loop(tx: Any, f: Any, args: tuple, kwargs: dict) -> Any:
    """``IOLoop.current()``, ``asyncio.get_event_loop()``: a lookup, pure, when
    this thread's loop runs and Tornado has its IOLoop; otherwise the call
    may make a loop (once, in a serial run), so the section becomes
    inevitable first."""
    running = asyncio._get_running_loop()
    known = getattr(tornado.ioloop.IOLoop, "_ioloop_for_asyncio", {})
    if tx is not None and not tx.inevitable and (running is None or running not in known):
        tx.become_inevitable(f"call to {policy.qualified_name(f)}")
    return f(*args, **kwargs)


def _register(method: Any, position: int | None, *, deferrable: bool) -> None:
    """``method``'s policy: it takes its callback at ``position`` (after ``self``)."""
    if method is None:
        return

    def schedule(tx: Any, f: Any, args: tuple, kwargs: dict) -> Any:
        if position is not None:
            args = _callback_made_serial(f, args, position)
        if tx is None or tx.inevitable or WORLD_LOCK.held_by_current_thread():
            return f(*args, **kwargs)
        if deferrable and (f.__name__ != "add_future" or _future_first(f, args)):
            tx.defer(functools.partial(_made_later, f, args, kwargs))
            return None
        tx.become_inevitable(f"call to {policy.qualified_name(f)}")
        return f(*args, **kwargs)

    schedule.__doc__ = (f"The policy of {policy.qualified_name(method)}: holding W, a plain "
                        f"call; in an optimistic section, "
                        + ("made at its commit." if deferrable else "inevitable first."))
    policy.register_special(method, schedule)


def _future_first(f: Any, args: tuple) -> bool:
    """``add_future(future, callback)`` is given a future (it asserts it at once)."""
    first = _self_taken(f)
    return len(args) > first and tornado.concurrent.is_future(args[first])


def _self_taken(f: Any) -> int:
    """How many of the arguments come before the method's own: 1 when ``f``
    is called unbound, with ``self`` first (it is its own policy key)."""
    return 1 if policy.normalize(f) is f else 0


def _made_later(f: Any, args: tuple, kwargs: dict) -> None:
    """A scheduling call queued by a section, made at its commit: one that
    fails (a loop closed meanwhile) is logged, and the section's other
    queued work still runs."""
    try:
        f(*args, **kwargs)
    except Exception:
        app_log.error("Exception in %s queued by a section", policy.qualified_name(f),
                      exc_info=True)


def _callback_made_serial(f: Any, args: tuple, position: int) -> tuple:
    """``args`` with the callback at ``position`` wrapped by :func:`in_a_section`
    if it is a library callable (``f`` bound, or called unbound with ``self``)."""
    position += _self_taken(f)
    if position >= len(args) or not _changes_state_in_place(args[position]):
        return args
    return (*args[:position], functools.partial(in_a_section, args[position]),
            *args[position + 1:])


def _changes_state_in_place(callback: Any) -> bool:
    """True unless ``callback`` is application code (a section of its own) or
    the framework's."""
    target = callback
    while isinstance(target, functools.partial):
        target = target.func
    if is_application_code(target):
        return False
    if type(target) is MethodType:
        target = target.__func__
    kind = type(target)
    if kind is FunctionType:
        module = target.__module__ or ""
    elif issubclass(kind, BuiltinFunctionType):        # (3.13's METH_METHOD ones too)
        owner = target.__self__
        module = "builtins" if owner is None else (
            owner.__name__ if type(owner) is ModuleType else type(owner).__module__)
    else:
        module = kind.__module__ or ""
    return module.partition(".")[0] not in FRAMEWORK_MODULES


def in_a_section(callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``callback(*args, **kwargs)`` as an atomic section, called through the
    call barrier: its policy decides (``list.append`` on the section's copy,
    unknown code inevitable)."""
    return run_section(through_the_call_barrier, (callback, *args), kwargs)
