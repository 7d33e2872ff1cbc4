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
* in an optimistic section, the ones that return nothing
  (``add_callback``, ``spawn_callback``, ``add_future``) are queued to
  run when the section ends (never if it aborts): the callback could not
  run before the section's end in a serial run either. The others give
  back a handle or task the section may use at once, so the section
  becomes inevitable first, as before, and then calls them in place.

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

import tornado.ioloop
import tornado.platform.asyncio

from tornado_stm.stm import policy, run_section
from tornado_stm.stm.barriers import call as call_barrier
from tornado_stm.stm.registry import is_instrumented
from tornado_stm.stm.section import ENTRY_CODE
from tornado_stm.stm.txn import current
from tornado_stm.stm.worldlock import WORLD_LOCK

#: asyncio's methods that schedule work on a loop (or drop it from one), and
#: where their callback is among the arguments (None: they take none).
ASYNCIO_SCHEDULING = {"call_soon": 0, "call_soon_threadsafe": 0, "call_later": 1,
                      "call_at": 1, "create_future": None, "create_task": None}
#: Tornado's ``IOLoop`` methods that do, returning nothing: deferred to the section's end.
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
        _register(asyncio.Future.add_done_callback, 0, deferrable=True)
        for ioloop_class in (tornado.ioloop.IOLoop, tornado.platform.asyncio.BaseAsyncIOLoop):
            for name, position in TORNADO_DEFERRABLE.items():
                _register(ioloop_class.__dict__.get(name), position, deferrable=True)
            for name, position in TORNADO_SCHEDULING.items():
                _register(ioloop_class.__dict__.get(name), position, deferrable=False)


def _register(method: Any, position: int | None, *, deferrable: bool) -> None:
    """``method``'s policy: it takes its callback at ``position`` (after ``self``)."""
    if method is None:
        return

    def schedule(tx: Any, f: Any, args: tuple, kwargs: dict) -> Any:
        if position is not None:
            args = _callback_made_serial(f, args, position)
        if tx is None or tx.inevitable or WORLD_LOCK.held_by_current_thread():
            return f(*args, **kwargs)
        if deferrable:
            tx.at_its_end(functools.partial(f, *args, **kwargs))
            return None
        tx.become_inevitable(f"call to {policy.qualified_name(f)}")
        return f(*args, **kwargs)

    schedule.__doc__ = (f"The policy of {policy.qualified_name(method)}: holding W, a plain "
                        f"call; in an optimistic section, "
                        + ("at its end." if deferrable else "inevitable first."))
    policy.register_special(method, schedule)


def _callback_made_serial(f: Any, args: tuple, position: int) -> tuple:
    """``args`` with the callback at ``position`` wrapped by :func:`in_a_section`
    if it is a library callable (``f`` bound, or called unbound with ``self``)."""
    if policy.normalize(f) is f:           # unbound: self is the first argument
        position += 1
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
    if type(target) is MethodType:
        target = target.__func__
    kind = type(target)
    if kind is FunctionType:
        if is_instrumented(target) or target.__code__ is ENTRY_CODE:
            return False
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
    return run_section(_through_the_barrier, (callback, *args), kwargs)


def _through_the_barrier(callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return call_barrier(current(), callback, *args, **kwargs)
