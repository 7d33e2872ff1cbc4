"""Builtins that act like barriers: ``getattr``, ``setattr``, ``next``, ``dict.get``...

Called through the policy table as *special* callables, they do what the
corresponding barrier does: ``getattr(obj, name)`` is ``get_attr``,
``d.get(k)`` a membership test and a read of one key (so a section that
reads one key does not conflict with writers of other keys), ``next`` on
a generator from before the section makes it inevitable. A handler
receives ``(tx, f, args, kwargs)`` and falls back to ``f`` itself for
unusual arguments, for the builtin's own error.
"""

from __future__ import annotations

import _string
import _thread
import asyncio
import concurrent.futures
import functools
import inspect
import multiprocessing.pool
import operator
import string
import sys
import threading
import time
import traceback
import types
import weakref
from types import BuiltinMethodType, MethodType, MethodWrapperType, ModuleType
from typing import Any, Optional

from tornado_stm.stm import policy
from tornado_stm.stm.attrkinds import W_PLAIN, refuses_attribute, write_kind
from tornado_stm.stm.barriers import (call, contains, deep_view, del_attr, del_item, frame_names,
                                      get_attr,
                                      get_item, instance_dict, reshaped_class, set_attr, set_item)
from tornado_stm.stm.bindings import bound_special
from tornado_stm.stm.calls import (ADVANCING_A_SHARED_ITERATOR, call_reading, checks_by_reading,
                                   handed_out_iterator, is_shared_iterator, through_the_barrier)
from tornado_stm.stm.reach import direct_container_call
from tornado_stm.stm.registry import application_frame, is_engine_code, is_instrumented
from tornado_stm.stm.section import (START_NEW_THREAD, after_the_section, as_plain_code_on_a_helper,
                                    start_thread)
from tornado_stm.stm.txn import Transaction, current, direct_write
from tornado_stm.stm.versions import stripe_of_key


def _attribute_name(name: Any) -> Optional[str]:
    """``name`` as a plain ``str``, as Python looks attributes up by it; None if not a string.

    A ``str`` subclass (a ``StrEnum`` member) names the same attribute as
    its plain text: it goes through the barriers as that text.
    """
    if type(name) is str:
        return name
    return str.__str__(name) if isinstance(name, str) else None


def _special_getattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    name = _attribute_name(args[1]) if len(args) > 1 else None
    if kwargs or not 2 <= len(args) <= 3 or name is None:
        return getattr(*args, **kwargs)         # the usual TypeError
    if name == "__dict__":
        return instance_dict(tx, args[0])       # also in an inevitable section
    return get_attr(tx, args[0], name, *args[2:])


def _special_hasattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> bool:
    name = _attribute_name(args[1]) if len(args) > 1 else None
    if kwargs or len(args) != 2 or name is None:
        return hasattr(*args, **kwargs)
    sentinel = object()
    return get_attr(tx, args[0], name, sentinel) is not sentinel


def _special_setattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> None:
    name = _attribute_name(args[1]) if len(args) > 1 else None
    if kwargs or len(args) != 3 or name is None:
        return setattr(*args, **kwargs)
    set_attr(tx, args[0], name, args[2])


def _special_delattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> None:
    name = _attribute_name(args[1]) if len(args) > 1 else None
    if kwargs or len(args) != 2 or name is None:
        return delattr(*args, **kwargs)
    del_attr(tx, args[0], name)


def _object_slot_call(f: Any, args: tuple, deleting: bool) -> tuple[Any, tuple]:
    """``object.__setattr__``/``__delattr__`` (or ``type``'s) and its full
    arguments, also when the slot came bound to its object
    (``super().__setattr__(name, value)``, ``obj.__delattr__``)."""
    if type(f) is MethodWrapperType:
        args = (f.__self__, *args)
        # (type's slot when bound to a class: super().__setattr__ in a metaclass)
        on_type = getattr(f, "__objclass__", object) is type
        if deleting:
            f = type.__delattr__ if on_type else object.__delattr__
        else:
            f = type.__setattr__ if on_type else object.__setattr__
    return f, args


def _refused_by_the_slot(f: Any, obj: Any) -> bool:
    """True when the slot's own TypeError is due: ``object``'s refuses classes, ``type``'s instances."""
    on_type = f is type.__setattr__ or f is type.__delattr__
    return isinstance(obj, type) != on_type


def _special_object_setattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> None:
    """``object.__setattr__(self, name, value)`` inside a custom ``__setattr__``, and the
    same slot bound to its object: ``super().__setattr__(name, value)``, ``obj.__setattr__``;
    ``type.__setattr__(cls, name, value)`` likewise, in a metaclass."""
    f, args = _object_slot_call(f, args, deleting=False)
    if len(args) == 3 and isinstance(args[0], type) and not kwargs:
        # type.__setattr__(Cls, "__len__", TABLE.__len__): see bindings
        args = (args[0], args[1], bound_special(args[1], args[2]))
    if len(args) == 3 and isinstance(args[0], ModuleType) and not kwargs:
        return set_attr(tx, *args, through_the_class=False)    # a module's dict
    name = _attribute_name(args[1]) if len(args) == 3 else None
    if not kwargs and name is not None and reshaped_class(tx, args[0], name, f, args[2]):
        return None
    if kwargs or name is None or (tx is not None and id(args[0]) in tx.private) \
            or _refused_by_the_slot(f, args[0]):
        return f(*args, **kwargs)
    obj, value = args[0], args[2]
    if tx is not None and not tx.inevitable and refuses_attribute(type(obj), name):
        tx.become_inevitable("object.__setattr__ of an attribute the object cannot hold")
    if tx is None or tx.inevitable:
        return direct_write((stripe_of_key(id(obj), name),), f, obj, name, value)
    tx.write_attr(obj, name, value)


def _special_object_delattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> None:
    """``object.__delattr__(self, name)`` inside a custom ``__delattr__``, and its bound
    forms, as :func:`_special_object_setattr` handles ``__setattr__``: the delete is
    logged (or, out of optimistic mode, made with the attribute's stripes held)
    without running the custom ``__delattr__`` again."""
    f, args = _object_slot_call(f, args, deleting=True)
    if len(args) == 2 and isinstance(args[0], ModuleType) and not kwargs:
        return del_attr(tx, *args)          # a module's attributes live in its dict
    name = _attribute_name(args[1]) if len(args) == 2 else None
    if not kwargs and name is not None and reshaped_class(tx, args[0], name, f):
        return None
    if kwargs or name is None or (tx is not None and id(args[0]) in tx.private) \
            or _refused_by_the_slot(f, args[0]):
        return f(*args, **kwargs)
    obj = args[0]
    if tx is not None and not tx.inevitable:
        if write_kind(type(obj), name, deleting=True) == W_PLAIN:
            return tx.delete_attr(obj, name)
        tx.become_inevitable(f"object.__delattr__ of {policy.qualified_name(type(obj))}.{name}")
    return direct_write((stripe_of_key(id(obj), name),), f, obj, name)


def _special_next(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    if (tx is not None and not tx.inevitable and args and id(args[0]) not in tx.private
            and is_shared_iterator(args[0])):
        tx.become_inevitable(ADVANCING_A_SHARED_ITERATOR)
    return f(*args, **kwargs)


def _special_iter(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """``iter(x)``: a new iterator is the section's own; ``iter(it)`` is ``it`` itself.

    ``iter(callable, sentinel)``: the iterator calls ``callable`` from C, so
    a mutator (``stack.pop``) goes through the call barrier instead, also in
    an inevitable section (whose in-place writes must bump versions).
    """
    if kwargs or not 1 <= len(args) <= 2:
        return f(*args, **kwargs)
    optimistic = tx is not None and not tx.inevitable
    if len(args) == 2:
        iterator = f(through_the_barrier(args[0]), args[1])
        return handed_out_iterator(tx, args[0], iterator) if optimistic else iterator
    if not optimistic:
        return f(*args)
    return handed_out_iterator(tx, args[0], call_reading(tx, f, args, kwargs))


def _special_isinstance(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> bool:
    """``isinstance``/``issubclass``: a class whose metaclass answers by reading the
    object (a ``runtime_checkable`` Protocol runs ``hasattr`` on it, in
    library code) makes an optimistic section inevitable first, so that
    the object's attributes are read as the section left them."""
    if tx is not None and not tx.inevitable and len(args) == 2 \
            and checks_by_reading(args[1]):
        tx.become_inevitable(f"{f.__name__}() with {policy.qualified_name(type(args[1]))}")
    return f(*args, **kwargs)


def _per_key(writes: bool) -> Any:
    """Make a special handler of a dict method ``(key[, default])`` from its per-key version.

    The common cases are handled here: a private dict, or a section that is
    not optimistic, calls the method itself (in place, with the dict's
    stripes bumped when the method ``writes``); unusual arguments go to the
    method for its own error.
    """
    def wrap(per_key: Any) -> Any:
        def handler(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
            d = getattr(f, "__self__", None)
            if not isinstance(d, dict) and args and isinstance(args[0], dict):
                # called unbound: dict.get(d, key, default)
                d, f, args = args[0], getattr(args[0], f.__name__), args[1:]
            if not isinstance(d, dict):
                return f(*args, **kwargs)       # the method's own TypeError
            if tx is not None and id(d) in tx.private:
                return f(*args, **kwargs)
            if tx is None or tx.inevitable:
                return direct_container_call((d,), f, args, kwargs) if writes else f(*args, **kwargs)
            if kwargs or not 1 <= len(args) <= 2:
                return f(*args, **kwargs)
            return per_key(tx, d, *args)
        return handler
    return wrap


@_per_key(writes=False)
def _special_dict_get(tx: Transaction, d: dict, key: Any, default: Any = None) -> Any:
    return get_item(tx, d, key) if contains(tx, key, d) else default


@_per_key(writes=True)
def _special_dict_setdefault(tx: Transaction, d: dict, key: Any, default: Any = None) -> Any:
    if contains(tx, key, d):
        return get_item(tx, d, key)
    set_item(tx, d, key, default)
    return default


@_per_key(writes=True)
def _special_dict_pop(tx: Transaction, d: dict, key: Any, *default: Any) -> Any:
    if contains(tx, key, d):
        value = get_item(tx, d, key)
        del_item(tx, d, key)
        return value
    if default:
        return default[0]
    raise KeyError(key)


def _special_weakref(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """``weakref.ref(obj, callback)``: the callback waits for the end of the
    section in which ``obj`` dies (see ``section.after_the_section``)."""
    if kwargs or len(args) != 2 or args[1] is None:
        return f(*args, **kwargs)
    return f(args[0], after_the_section(args[1]))


def _special_thread_start(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> None:
    """``thread.start()``: irrevocable, and the thread runs as plain code
    (``section.start_thread``)."""
    thread = f.__self__ if isinstance(f, MethodType) else (args[0] if args else None)
    if kwargs or len(args) != (0 if isinstance(f, MethodType) else 1) \
            or not isinstance(thread, threading.Thread):
        return f(*args, **kwargs)
    if tx is not None:
        tx.become_inevitable("starting a thread")
    start_thread(thread)


def _special_start_new_thread(tx: Optional[Transaction], f: Any, args: tuple,
                              kwargs: dict) -> Any:
    """``_thread.start_new_thread(fn, args)`` in instrumented code: as ``Thread.start``,
    irrevocable, and ``fn`` runs as plain code borrowing this section's W."""
    if not args:
        return f(*args, **kwargs)                # the usual TypeError
    if tx is not None:
        tx.become_inevitable("starting a thread")
    return f(as_plain_code_on_a_helper(args[0]), *args[1:], **kwargs)


def handing_work_to_a_thread(kinds: tuple, position: int) -> Any:
    """A special for a call that hands a function to threads it does not start
    itself and waits, or lets its caller wait, for what they return: a
    thread pool's ``submit``/``map`` (``concurrent.futures``, and
    ``multiprocessing.pool.ThreadPool``'s ``apply``, ``map``, ``imap``,
    ``starmap``...), ``loop.run_in_executor``, ``asyncio.to_thread`` and a
    ``concurrent.futures.Future``'s ``add_done_callback``.
    The function is the call's argument at ``position`` (after the bound
    object, for methods); ``kinds``, when given, are the types that bound
    object must have. Irrevocable (threads start, the work runs once),
    and the function runs on the pool's thread as plain code borrowing
    this section's W (``section.as_plain_code_on_a_helper``): as one
    section of its own it would wait for the W of the section that waits
    for it."""

    def special(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
        if isinstance(f, MethodType):               # pool.map(fn, rows)
            owner, head, rest = f.__self__, (), args
        elif kinds:                                 # ThreadPool.map(pool, fn, rows)
            owner, head, rest = (args[0] if args else None), args[:1], args[1:]
        else:                                       # asyncio.to_thread(fn, x)
            owner, head, rest = None, (), args
        if (kinds and not isinstance(owner, kinds)) or len(rest) <= position:
            return f(*args, **kwargs)
        if tx is not None:
            tx.become_inevitable(f"handing work to {policy.qualified_name(f)}")
        handed = list(rest)
        handed[position] = as_plain_code_on_a_helper(_versioning_its_writes(rest[position]))
        # What the pool's own threads call back (ThreadPool's callbacks, at
        # their keyword or their place after the task's arguments, and the
        # initializer each new thread runs first) is plain code too: as a
        # section it would wait for the W of the section waiting for it.
        for name, index in (("callback", position + 3), ("error_callback", position + 4)):
            if is_application_code(kwargs.get(name)):
                kwargs = {**kwargs, name: as_plain_code_on_a_helper(kwargs[name])}
            elif isinstance(owner, _POOLS) and index < len(handed) \
                    and is_application_code(handed[index]):
                handed[index] = as_plain_code_on_a_helper(handed[index])
        if is_application_code(getattr(owner, "_initializer", None)):
            owner._initializer = as_plain_code_on_a_helper(owner._initializer)
        return f(*head, *handed, **kwargs)
    return special


def _versioning_its_writes(fn: Any) -> Any:
    """``fn`` as a pool's thread should call it: application code as it is
    (its own barriers version what it writes); a library callable handed
    over (``POOL.submit(EVENTS.append, x)``) through the call barrier, as
    plain code calls it: by its policy, under W, the stripes of what it
    changes held and versioned, so that an optimistic section which read
    them cannot commit its copy over the change (a fire-and-forget task
    runs after the section that handed it over, when its W is no longer
    lent)."""
    if not callable(fn) or is_application_code(fn):
        return fn
    return functools.partial(through_the_call_barrier, fn)


def through_the_call_barrier(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` made by the call barrier of the current section
    (or of plain code, outside one), as if application code made it; a
    ``functools.partial`` and an ``operator.methodcaller`` are opened, so
    that the barrier sees what they call (``partial(EVENTS.insert, 0)``,
    ``methodcaller("append", x)(EVENTS)``)."""
    while True:
        if type(fn) is functools.partial:
            args = (*fn.args, *args)
            kwargs = {**fn.keywords, **kwargs}
            fn = fn.func
        elif type(fn) is operator.methodcaller and len(args) == 1 and not kwargs:
            fn, args, kwargs = _opened_methodcaller(fn, args[0])
        else:
            return call(current(), fn, *args, **kwargs)


def _opened_methodcaller(caller: operator.methodcaller, obj: Any) -> tuple[Any, tuple, dict]:
    """``methodcaller(name, *a, **k)(obj)`` as ``(obj.name, a, k)``, read from its
    ``__reduce__`` (the only way it tells its name and arguments)."""
    made_by, args = caller.__reduce__()
    keywords = made_by.keywords if isinstance(made_by, functools.partial) else {}
    if isinstance(made_by, functools.partial):
        args = (*made_by.args, *args)
    name, *rest = args
    return getattr(obj, name), tuple(rest), dict(keywords)


def is_application_code(fn: Any) -> bool:
    """An instrumented function (an entry wrapper's code counts as
    instrumented), or a method of one (a callback of the application)."""
    return is_instrumented(fn) or (type(fn) is MethodType and is_instrumented(fn.__func__))


_THREAD_POOLS = (concurrent.futures.ThreadPoolExecutor,)
_POOLS = (multiprocessing.pool.ThreadPool,)
_LOOPS = (asyncio.AbstractEventLoop,)


def _special_frame(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """``sys._getframe(depth)`` and ``inspect.currentframe()``: the application's
    frame, as plain Python has it, not the call barrier's (the engine's own
    frames are skipped, ``depth`` counts the application's). Its
    ``f_globals`` is the module's dict, which may be written through: for a
    module whose functions read some globals plainly, the section turns
    inevitable and every overlapping one aborts, as for ``vars(module)``."""
    depth = args[0] if args else kwargs.get("depth", 0)
    frame = application_frame(sys._getframe(1))[0]
    for _ in range(depth):
        frame = application_frame(frame.f_back)[0] if frame is not None else None
    if frame is None:
        raise ValueError("call stack is not deep enough")
    module = sys.modules.get(frame.f_globals.get("__name__", ""))
    if isinstance(module, ModuleType) and module.__dict__ is frame.f_globals:
        instance_dict(tx, module)
    return frame


def _special_frame_builtin(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """``globals()``, ``locals()``, ``vars()``, ``dir()``, ``eval(text)`` and
    ``exec(text)`` called through the call barrier (an alias: ``g = globals``,
    ``builtins.locals``, ``getattr(builtins, "eval")``): of the application's
    frame, as the rewriter's direct calls are, not of the engine's."""
    if f in (vars, dir) and (args or kwargs):
        # vars(obj), dir(obj): they read obj's __dict__ (as the "deep" policy had it)
        if tx is not None and not tx.inevitable:
            tx.become_inevitable(f"{f.__name__}() of an object")
        return f(*args, **kwargs)
    frame = _special_frame(tx, sys._getframe, (), {})
    if f is globals:
        return frame.f_globals
    names = frame_names(tx, frame.f_locals)
    if f is dir:
        return sorted(names)
    if f is locals or f is vars:
        return names
    if len(args) == 1 and not kwargs:           # eval(text), exec(text)
        return f(args[0], frame.f_globals, names)
    return f(*args, **kwargs)


def _special_stack(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """``inspect.stack()`` and ``traceback.extract_stack()``: the application's
    frames, as plain Python lists them (the engine's own left out)."""
    if f is traceback.extract_stack and not args and "f" not in kwargs:
        args = (application_frame(sys._getframe(1))[0],)
    frames = f(*args, **kwargs)
    kept = [entry for entry in frames if not is_engine_code(
        entry.frame.f_code if isinstance(entry, inspect.FrameInfo) else _code_of(entry))]
    return traceback.StackSummary.from_list(kept) \
        if isinstance(frames, traceback.StackSummary) else kept


def _special_formatted_stack(tx: Optional[Transaction], f: Any, args: tuple,
                             kwargs: dict) -> Any:
    """``traceback.format_stack()`` and ``print_stack()``: of the application's
    frames (the engine's own left out); printing is irrevocable."""
    names = ("f", "limit", "file")
    given = {**dict(zip(names, args)), **kwargs}
    frame = given.get("f") or application_frame(sys._getframe(1))[0]
    summary = _special_stack(tx, traceback.extract_stack, (frame, given.get("limit")), {})
    if f is traceback.format_stack:
        return summary.format()
    if tx is not None:
        tx.become_inevitable("traceback.print_stack")
    print("".join(summary.format()), file=given.get("file") or sys.stderr, end="")
    return None


def _code_of(summary: traceback.FrameSummary) -> Any:
    """A stand-in code object for ``is_engine_code``: only its file name is asked."""
    return types.SimpleNamespace(co_filename=summary.filename)


def _special_operator_call(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """``operator.call(g, *args)`` is ``g(*args)``: through the call barrier, so a
    library function ``g`` is judged by its own policy (from C it would run
    in place, unlogged, in an optimistic section)."""
    if not args:
        return f(*args, **kwargs)               # the usual TypeError
    return call(tx, args[0], *args[1:], **kwargs)


def _special_clock(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """``time.monotonic()`` and the other clocks: read in place, placed in
    the serial order at the commit (``Transaction.read_clock``)."""
    if tx is None or args or kwargs:
        return f(*args, **kwargs)
    return tx.read_clock(f)


#: The clocks whose readings follow the serial order (process_time too: the
#: process's CPU time only grows). ``transaction.time()`` and ``clock()``
#: are PyPy-STM's readings that never conflict, and stay so.
_CLOCKS = (time.time, time.time_ns, time.monotonic, time.monotonic_ns, time.perf_counter,
           time.perf_counter_ns, time.process_time, time.process_time_ns)


class _FieldsThroughTheBarriers(string.Formatter):
    """``str.format`` whose fields (``{0.rate}``, ``{row[2]}``) are reached through
    the barriers, and whose values are read as an f-string reads them."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

    def get_value(self, key: Any, args: Any, kwargs: Any) -> Any:
        return args[key] if isinstance(key, int) else get_item(self.tx, kwargs, key)

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, Any]:
        first, rest = _string.formatter_field_name_split(field_name)
        value = self.get_value(first, args, kwargs)
        for is_attribute, name in rest:
            value = (get_attr(self.tx, value, name) if is_attribute
                     else get_item(self.tx, value, name))
        return value, first

    def convert_field(self, value: Any, conversion: Any) -> Any:
        return super().convert_field(deep_view(self.tx, value), conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        return format(deep_view(self.tx, value), format_spec)


@functools.lru_cache(maxsize=512)
def _reaches_into_fields(template: str) -> bool:
    """Whether a format string names attributes or items of its arguments."""
    try:
        return any(field is not None and ("." in field or "[" in field)
                   for _, field, _, _ in string.Formatter().parse(template))
    except ValueError:
        return False                            # str.format raises it, as it would


def _special_str_format(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """``template.format(...)`` and ``format_map``: the values are read as the
    section sees them (call_reading); fields that reach into them
    (``"{0.rate}".format(plan)``, a class attribute found from C past the
    barriers) are looked up through the barriers."""
    bound = isinstance(f, BuiltinMethodType)
    template = f.__self__ if bound else (args[0] if args else None)
    values = args if bound else args[1:]
    if tx is None or tx.inevitable or type(template) is not str:
        return f(*args, **kwargs)
    if not _reaches_into_fields(template):
        return call_reading(tx, f, args, kwargs)
    if f.__name__ == "format_map":
        if kwargs or len(values) != 1:
            return f(*args, **kwargs)           # the usual TypeError
        return _FieldsThroughTheBarriers(tx).vformat(template, (), values[0])
    return _FieldsThroughTheBarriers(tx).vformat(template, values, kwargs)


#: The callables with a handler here, and their handlers.
SPECIALS = ((getattr, _special_getattr), (hasattr, _special_hasattr),
            (setattr, _special_setattr), (delattr, _special_delattr),
            (object.__setattr__, _special_object_setattr),
            (type.__setattr__, _special_object_setattr),
            (object.__delattr__, _special_object_delattr),
            (type.__delattr__, _special_object_delattr), (next, _special_next),
            (iter, _special_iter),
            (dict.get, _special_dict_get), (dict.setdefault, _special_dict_setdefault),
            (dict.pop, _special_dict_pop), (weakref.ref, _special_weakref),
            (isinstance, _special_isinstance), (issubclass, _special_isinstance),
            (threading.Thread.start, _special_thread_start),
            (operator.call, _special_operator_call),
            (sys._getframe, _special_frame), (inspect.currentframe, _special_frame),
            *((builtin, _special_frame_builtin)
              for builtin in (globals, locals, vars, dir, eval, exec)),
            (inspect.stack, _special_stack), (traceback.extract_stack, _special_stack),
            (traceback.format_stack, _special_formatted_stack),
            (traceback.print_stack, _special_formatted_stack),
            (concurrent.futures.ThreadPoolExecutor.submit, handing_work_to_a_thread(_THREAD_POOLS, 0)),
            (concurrent.futures.Executor.map, handing_work_to_a_thread(_THREAD_POOLS, 0)),
            *((getattr(multiprocessing.pool.Pool, name), handing_work_to_a_thread(_POOLS, 0))
              for name in ("apply", "apply_async", "map", "map_async", "imap", "imap_unordered",
                           "starmap", "starmap_async")),
            (asyncio.BaseEventLoop.run_in_executor, handing_work_to_a_thread(_LOOPS, 1)),
            (asyncio.to_thread, handing_work_to_a_thread((), 0)),
            (concurrent.futures.Future.add_done_callback,
             handing_work_to_a_thread((concurrent.futures.Future,), 0)),
            (str.format, _special_str_format), (str.format_map, _special_str_format),
            *((clock, _special_clock) for clock in _CLOCKS))


def register() -> None:
    """Enter the handlers in the policy table (:func:`tornado_stm.stm.start` does it once)."""
    for callable_, handler in SPECIALS:
        policy.register_special(callable_, handler)
    # Thread.start and _thread.start_new_thread as section.watch_thread_starts() left them.
    policy.register_special(threading.Thread.start, _special_thread_start)
    for start_new_thread in {_thread.start_new_thread, START_NEW_THREAD}:
        policy.register_special(start_new_thread, _special_start_new_thread)
