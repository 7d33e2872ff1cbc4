"""How a section calls code that is not instrumented: the call policy at work.

The ``call`` barrier (:mod:`tornado_stm.stm.barriers`) runs calls between
application functions as plain calls; every other callable comes here.
In an optimistic section, :func:`call_optimistic` looks the callable up
in the policy table (:mod:`tornado_stm.stm.policy`) and

* runs a *pure* call with the shared containers among its arguments read
  consistently (inside a version window, or on the section's read shadow
  when the result keeps reading them: an iterator, a view);
* runs a call that *mutates* a list, dict or set argument on the
  section's private copy of it (its write shadow);
* hands a *special* callable to its handler (:mod:`.specials`);
* makes the section inevitable for anything else, and then calls it in
  place (:func:`call_direct`), bumping the versions of the shared
  containers it mutates so that optimistic readers abort.

Calling a class defined by the application (or a builtin exception) is
safe: :func:`class_policy` decides once per class.
"""

from __future__ import annotations

import abc
import array
import collections
import collections.abc
import copy
import dataclasses
import enum
import functools
import heapq
import itertools
import logging
import math
import operator
import sys
import typing
import warnings
from collections import OrderedDict, defaultdict, deque
from types import (AsyncGeneratorType, BuiltinFunctionType, CoroutineType, FunctionType,
                   GeneratorType, MappingProxyType, MethodDescriptorType, MethodType,
                   MethodWrapperType, ModuleType, SimpleNamespace, WrapperDescriptorType)
from typing import Any, Optional

from tornado_stm.stm import faults, policy
from tornado_stm.stm.extension import EXTENSION, VIEW_MAPPING
from tornado_stm.stm.attrkinds import IMMUTABLE_TYPES
from tornado_stm.stm.bindings import audited_namespace
from tornado_stm.stm.registry import (ENGINE_DIR, INSTRUMENTED_CODES, application_frame,
                                      is_engine_code, is_instrumented, python_methods)
from tornado_stm.stm.reach import (ATOM_TYPES, FRAME_TYPES, HEAP_TYPE, HOLDING_IMMUTABLE_TYPES,
                                   IMMUTABLE_HOLDERS, attribute_names, bound_self, held_items,
                                   direct_call_reaching, direct_container_call)
from tornado_stm.stm.txn import (BARRIERS_ABOVE, CONTAINER_TYPES, VERSIONS, Transaction, current,
                                 direct_write, hold, hold_lookups_in_place, is_finalized)
from tornado_stm.stm.versions import RESHAPE_STRIPE, stripe_of_key, stripe_of_object
from tornado_stm.stm.worldlock import WORLD_LOCK

#: Why a section becomes inevitable before consuming an iterator it did not make.
ADVANCING_A_SHARED_ITERATOR = "advancing an iterator or generator from outside the section"


def is_shared_iterator(obj: Any) -> bool:
    """True for an iterator (a generator too) that is not an immutable value.

    Callers check privacy first: an iterator made by the section is its own
    to consume. Any other one (``itertools.count()`` kept in a global, a
    file, a shared generator) changes as it is consumed, and no abort can
    put back what it gave out.
    """
    kind = type(obj)
    return kind not in IMMUTABLE_TYPES and hasattr(kind, "__next__")


#: Mutable byte and number buffers. The engine keeps no version for their
#: contents, and builtins read them as buffers: a section that reads a
#: shared one runs inevitably, where the read cannot be overtaken.
MUTABLE_BUFFER_TYPES = (bytearray, array.array, memoryview)
#: What a section reads only inevitably: the buffers, and a mappingproxy,
#: which reads its mapping live, past the read log and the section's own writes.
READ_INEVITABLY_TYPES = (*MUTABLE_BUFFER_TYPES, MappingProxyType)
#: Views of a dict, by the method that makes them (OrderedDict's are subclasses).
DICT_VIEW_METHODS = ((type({}.keys()), "keys"), (type({}.values()), "values"),
                     (type({}.items()), "items"))
DICT_VIEW_TYPES = tuple(kind for kind, _ in DICT_VIEW_METHODS)


def read_other_shared(tx: Transaction, obj: Any) -> Any:
    """What plain code should read for ``obj``, neither a container nor the section's own.

    A mutable buffer makes the section inevitable first (its contents have
    no versions). A view of a shared dict (a ``d.values()`` kept in a
    global) would read the live dict: the same view of the section's read
    shadow is returned instead. Anything else is returned as it is.
    """
    if isinstance(obj, READ_INEVITABLY_TYPES):
        tx.become_inevitable(f"reading a shared {type(obj).__name__}")
    elif isinstance(obj, DICT_VIEW_TYPES) and not tx.inevitable:
        if VIEW_MAPPING is None:                     # no C helper (PyPy): slow but right
            tx.become_inevitable("reading a dict view made outside the section")
            return obj
        mapping = VIEW_MAPPING(obj)                  # the dict a view reads
        if id(mapping) not in tx.private and not any(
                log.shadow is mapping for log in tx.containers.values()):
            method = next(name for kind, name in DICT_VIEW_METHODS if isinstance(obj, kind))
            return getattr(tx.read_shadow(mapping), method)()
    return obj


def handed_out_iterator(tx: Transaction, iterable: Any, iterator: Any) -> Any:
    """``iterator``, just returned by ``iterable.__iter__``: the section's own
    when nothing else holds it (a new generator, an iterator over the read
    shadow); one that something else holds too (an object keeping one
    shared iterator and handing it out from ``__iter__``) changes for every
    section that consumes it, so this one becomes inevitable first."""
    if iterator is iterable or id(iterator) in tx.private or not is_shared_iterator(iterator):
        return iterator
    # Callers pass iter(...) itself as the argument: then this frame's
    # parameter and getrefcount's own argument are the only references to a
    # new iterator.
    if sys.getrefcount(iterator) > _ONLY_HERE:
        tx.become_inevitable(ADVANCING_A_SHARED_ITERATOR)
    else:
        tx.adopt(iterator)
    return iterator


#: sys.getrefcount() of an object that only handed_out_iterator's parameter holds.
_ONLY_HERE = 2


def is_a(obj: Any, kinds: Any) -> bool:
    """``isinstance(obj, kinds)`` that never runs an application ``__getattribute__``.

    isinstance() asks ``obj.__class__`` when the type alone does not answer,
    and a class whose ``__getattribute__`` calls ``object.__getattribute__``
    would come back to the call barrier, for ever. Such a class is judged
    by its type; a C proxy (``weakref.proxy``) still by its ``__class__``.
    """
    kind = type(obj)
    if issubclass(kind, kinds):
        return True
    if type(getattr(kind, "__getattribute__", None)) is FunctionType:
        return False
    return isinstance(obj, kinds)


def bound_container(f: Any) -> Any:
    """The shared-container kind of object a bound method belongs to, or None.

    C methods (``lst.append``, ``d.items``) and Python methods of container
    types (``Counter.update``) both count.
    """
    kind = type(f)
    if kind is BuiltinFunctionType or kind is MethodWrapperType or kind is MethodType:
        owner = f.__self__
        if is_a(owner, CONTAINER_TYPES):
            return owner
    return None


#: Methods of containers whose result keeps reading the container later.
LAZY_METHODS = frozenset({"keys", "values", "items", "__iter__", "__reversed__", "elements"})

#: Methods of a list, deque or tuple that compare its items with == or <
#: (so read the values nested in them) and find an argument by identity
#: first (``rows.index(row)``). The C fast path knows them too.
COMPARING_METHODS = frozenset({"index", "count", "remove", "sort"})
_COMPARED_OWNERS = (list, deque, tuple)
#: Functions that compare the items of the list they are given (O(n) anyway).
COMPARING_FUNCTIONS: set = {heapq.heapify}


def _compares_items(f: Any) -> bool:
    owner = bound_self(f)
    if owner is not None:
        return is_a(owner, _COMPARED_OWNERS) and f.__name__ in COMPARING_METHODS
    try:
        return f in COMPARING_FUNCTIONS
    except TypeError:                             # an unhashable callable
        return False


#: Functions written in C: called by other C code, their policy is not applied.
_C_FUNCTIONS = (BuiltinFunctionType, MethodDescriptorType, WrapperDescriptorType,
                MethodWrapperType)


#: operator's callables: C code calling a method or reading attributes or items.
_OPERATOR_CALLABLES = (operator.methodcaller, operator.attrgetter, operator.itemgetter)


def through_the_barrier(value: Any) -> Any:
    """``value``, or, for a C function with effects (``next``, ``setattr``,
    ``list.append``) that a library function would call from C past every
    barrier (``map(next, streams)``, ``sorted(xs, key=next)``,
    ``iter(stack.pop, None)``), a Python function making each of those calls
    through the call barrier. operator's callables (``methodcaller("append",
    x)``, ``attrgetter("balance")``) are wrapped too: called from C they
    would change or read a shared object past its barriers, missing the
    section's own writes."""
    target = value.func if type(value) is functools.partial else value
    if not isinstance(target, _OPERATOR_CALLABLES) and not _reads_operands(target) and (
            not isinstance(target, _C_FUNCTIONS) or policy.lookup(target).kind == "pure"):
        return value
    return CalledThroughTheBarrier(value)


#: C functions that read what their operands hold (``map(operator.getitem,
#: [counts], keys)`` of a shared defaultdict inserts the keys; ``accumulate(sets,
#: operator.or_)`` reads each set): handed over, each call goes through the
#: barrier, which sees the section's own writes and records what it reads.
_OPERAND_READERS = frozenset({
    operator.getitem, operator.add, operator.concat, operator.or_, operator.and_,
    operator.xor, operator.sub, operator.mul, operator.contains, operator.countOf,
    operator.indexOf, operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
    operator.ge, dict.__getitem__, list.__getitem__})


def _reads_operands(target: Any) -> bool:
    # (the type first: hashing any value, or failing to, costs more)
    return type(target) in _C_CALLABLE_TYPES and target in _OPERAND_READERS


_C_CALLABLE_TYPES = (BuiltinFunctionType, MethodDescriptorType, WrapperDescriptorType)


class CalledThroughTheBarrier:
    """A callable handed to library code in place of ``wrapped`` (see
    :func:`through_the_barrier`): calling it goes through the call barrier;
    compared, hashed or formatted (``listeners.index(EV.append)``,
    ``"%r" % handler``) it is ``wrapped``, and a library call that keeps it
    in the container it returns (``dict(cb=EV.append)``) gives ``wrapped``
    back (:func:`_callables_given_back`)."""

    __slots__ = ("wrapped",)

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return BARRIERS_ABOVE.call(current(), self.wrapped, *args, **kwargs)

    def __eq__(self, other: Any) -> Any:
        return self.wrapped == (other.wrapped if type(other) is CalledThroughTheBarrier else other)

    def __ne__(self, other: Any) -> Any:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.wrapped)

    def __repr__(self) -> str:
        return repr(self.wrapped)

    # copy.copy(print) is print: a copy of the stand-in is the stand-in, given back as the callable
    def __copy__(self) -> "CalledThroughTheBarrier":
        return self

    def __deepcopy__(self, memo: dict) -> "CalledThroughTheBarrier":
        return self

    def __reduce_ex__(self, protocol: Any) -> Any:
        return self.wrapped.__reduce_ex__(protocol)


def _arguments_through_the_barrier(args: tuple, kwargs: dict, f: Any = None
                                   ) -> tuple[tuple, dict, dict]:
    """The arguments of a call to library code, each passed through
    :func:`through_the_barrier`, and the stand-ins made (id -> the callable).
    Arguments ``f`` only hands back as values (:data:`_VALUES_HANDED_BACK`)
    stay themselves: a stand-in would come back out of the iterator."""
    kept = _VALUES_HANDED_BACK.get(f, ()) if type(f) is type else ()
    if kept is not _EVERY_ARGUMENT:
        args = tuple(map(through_the_barrier, args))
    if kwargs:
        kwargs = {name: value if name in kept or kept is _EVERY_ARGUMENT
                  else through_the_barrier(value) for name, value in kwargs.items()}
    stand_ins = {id(arg): arg.wrapped for _, arg in _arguments(args, kwargs)
                 if type(arg) is CalledThroughTheBarrier}
    return args, kwargs, stand_ins


_EVERY_ARGUMENT = ("*",)
#: Library iterators that yield some of their arguments back, never calling
#: them (``repeat(print)``, ``zip_longest(..., fillvalue=L.append)``).
_VALUES_HANDED_BACK: dict = {itertools.repeat: _EVERY_ARGUMENT,
                             itertools.zip_longest: ("fillvalue",),
                             itertools.accumulate: ("initial",)}


def _callables_given_back(result: Any, stand_ins: dict) -> Any:
    """``result`` of a library call given ``stand_ins`` (id -> callable): the
    callables where the top level of a list or dict it returns keeps their
    stand-ins (``dict(cb=EV.append)``), or where it is one (``max``)."""
    return _restore_identity(stand_ins, result) if stand_ins else result


#: Library functions that compare what their ``key=`` function returns.
_SORTING_BY_KEY = frozenset({sorted, min, max, heapq.nsmallest, heapq.nlargest})


def _keys_as_the_section_sees_them(f: Any, kwargs: dict) -> dict:
    """``sorted(names, key=lambda n: SCORES[n])``: an application's key function
    may return shared containers, which the C code compares past the
    barriers (missing the section's own writes to them): each key goes
    through ``deep_view``, as the operands of ``<`` do."""
    key = kwargs["key"]
    if not is_instrumented(key):
        return kwargs
    try:
        sorts = f in _SORTING_BY_KEY or (type(f) is BuiltinFunctionType and f.__name__ == "sort"
                                         and type(f.__self__) is list)
    except TypeError:                             # an unhashable callable
        sorts = False
    if not sorts:
        return kwargs
    def key_viewed(item: Any) -> Any:
        return BARRIERS_ABOVE.deep_view(current(), key(item))
    return {**kwargs, "key": key_viewed}


def call_optimistic(tx: Transaction, f: Any, args: tuple, kwargs: dict) -> Any:
    rule = policy.lookup(f)
    if rule is policy.IRREVOCABLE and isinstance(f, type):
        rule = class_policy(f)
    if _makes_a_class(f, args):
        making_a_class(tx, args[1])
        args = _namespace_audited(args)
    if rule.kind == "pure" and (args or kwargs) and not _sees_identity(f):
        args, kwargs, stand_ins = _arguments_through_the_barrier(args, kwargs, f)
        result = _call_optimistic(tx, f, rule, args, kwargs)
        return _callables_given_back(result, stand_ins) if stand_ins else result
    return _call_optimistic(tx, f, rule, args, kwargs)


def _makes_a_class(f: Any, args: tuple) -> bool:
    """``type(name, bases, ns)``, ``Meta(name, bases, ns)``: a class is made."""
    return isinstance(f, type) and issubclass(f, type) and len(args) == 3


def _namespace_audited(args: tuple) -> tuple:
    """The arguments of ``type(name, bases, ns)`` in a section, special methods
    of ``ns`` bound to C code given their rules (``bindings.audited_namespace``)."""
    return (args[0], args[1], audited_namespace(args[2]))


def _sees_identity(f: Any) -> bool:
    """True for the pure builtins that answer by an argument's identity or type
    (``type(print)``, ``id(cb)``): they never call it, and a stand-in would show."""
    return f is type or f is id or f is operator.is_ or f is operator.is_not


def _call_optimistic(tx: Transaction, f: Any, rule: policy.CallPolicy, args: tuple,
                     kwargs: dict) -> Any:
    kind = rule.kind
    if kind == "pure" and (args or kwargs):
        if not (isinstance(f, type) and _builds_plainly(f)) and not _plain_init(f) \
                and _hands_over_library_python(args, kwargs):
            # map(restock, rows), sorted(xs, key=lib_key): the builtin would run
            # library Python in place, past every barrier.
            tx.become_inevitable(f"library code handed to {policy.qualified_name(f)}")
            return call_direct(tx, f, args, kwargs)
    if kwargs and "key" in kwargs:
        kwargs = _keys_as_the_section_sees_them(f, kwargs)
    if kind == "special":
        return rule.handler(tx, f, args, kwargs)
    if kind == "handoff":
        return f(*args, **kwargs)
    if kind == "pure" and (isinstance(f, type) and _builds_plainly(f) or _plain_init(f)):
        # An application class (or exception), or its super().__init__(...):
        # its own __init__ reads through the barriers, and keeps the very
        # objects it is given (Exception.__init__ keeps them in .args).
        if isinstance(f, type) and _finalized_and_built_by_object(f):
            return _fresh(tx, rule, _build_registered(tx, f, args, kwargs))
        return _fresh(tx, rule, f(*args, **kwargs))
    owner = bound_container(f)
    if owner is not None:
        if id(owner) in tx.private:
            return call_reading(tx, f, args, kwargs)
        if kind == "pure":
            name = f.__name__
            log = tx.containers.get(id(owner))
            if type(owner) is defaultdict:
                # counts.__getitem__(k) inserts a missing key: into the copy
                copy_given = tx.copy_for_lookups(owner)
                if copy_given is None:
                    tx.become_inevitable(f"a defaultdict's factory run by {name}")
                    return call_direct(tx, f, args, kwargs)
                method = getattr(copy_given, name)
                return _fresh(tx, rule, call_reading(tx, method, args, kwargs, original=f))
            if log is not None or name in LAZY_METHODS or name in COMPARING_METHODS:
                method = getattr(tx.read_shadow(owner), name)
                return _fresh(tx, rule, call_reading(tx, method, args, kwargs, original=f))
            return _fresh(tx, rule, call_reading(tx, f, args, kwargs, also=owner))
        if kind == "mutates" and 0 in rule.writes:
            # dst.extend(src): the arguments are read consistently too.
            method = getattr(tx.shadow_for_write(owner), f.__name__)
            return _fresh(tx, rule, call_reading(tx, method, args, kwargs, original=f))
    elif kind == "mutates" and 0 in rule.writes and bound_self(f) is not None:
        # A method that changes its own object (random.Random.randint): in
        # place when this section made the object, inevitably otherwise.
        if id(bound_self(f)) in tx.private and len(rule.writes) == 1:
            return _fresh(tx, rule, call_reading(tx, f, args, kwargs))
    elif kind == "pure":
        return _fresh(tx, rule, call_reading(tx, f, args, kwargs), args, kwargs)
    elif kind == "mutates" and _can_shadow(tx, args, rule.writes):
        args = tuple(tx.shadow_for_write(arg) if index in rule.writes and id(arg) not in tx.private
                     else arg for index, arg in enumerate(args))
        return _fresh(tx, rule, call_reading(tx, f, args, kwargs))
    if kind == "deep" and _deeply_private(tx, (args, kwargs)):
        # json.dumps of a structure built by this section: nothing shared to read.
        return f(*args, **kwargs)
    what = "deep read by" if kind == "deep" else "call to"
    tx.become_inevitable(f"{what} {policy.qualified_name(f)}")
    return call_direct(tx, f, args, kwargs)


#: How many objects _deeply_private() looks at before giving up.
DEEP_CHECK_BUDGET = 10_000

#: ``_fastpath.deeply_private(tx, obj, budget)``: True when ``obj`` reaches
#: only immutable values and lists, dicts and sets private to ``tx`` (a
#: structure the section built), walked in C; False when it cannot tell.
#: None without the extension (the Python walks below decide alone).
_C_DEEPLY_PRIVATE = getattr(EXTENSION, "deeply_private", None)


def _deeply_private(tx: Transaction, root: Any) -> bool:
    """True if ``root`` reaches only immutable values and containers private to ``tx``.

    The argument tuple and keyword dict themselves are the caller's; the
    containers inside them must be private. Other objects (instances) are
    assumed shared. Gives up (False) after ``DEEP_CHECK_BUDGET`` objects; a
    container of numbers and strings only (a row of a grid) is passed over
    at C speed, as one.
    """
    if _C_DEEPLY_PRIVATE is not None and _C_DEEPLY_PRIVATE(tx, root[0], DEEP_VIEW_BUDGET) \
            and all(_C_DEEPLY_PRIVATE(tx, value, DEEP_VIEW_BUDGET) for value in root[1].values()):
        return True
    stack = [root]
    budget = DEEP_CHECK_BUDGET
    while stack:
        budget -= 1
        if budget < 0:
            return False
        obj = stack.pop()
        kind = type(obj)
        if kind is tuple or kind is frozenset:
            stack.extend(obj)
        elif kind in IMMUTABLE_TYPES:
            continue
        elif obj is root[1] or id(obj) in tx.private:
            if kind is dict or obj is root[1]:
                if not (ATOM_TYPES.issuperset(map(type, obj.values()))
                        and ATOM_TYPES.issuperset(map(type, obj))):
                    stack.extend(obj.keys())
                    stack.extend(obj.values())
            elif kind is list or kind is set:
                if not ATOM_TYPES.issuperset(map(type, obj)):
                    stack.extend(obj)
            else:
                return False
        else:
            return False
    return True


def _can_shadow(tx: Transaction, args: tuple, writes: tuple[int, ...]) -> bool:
    """True when every written argument is private or a list, dict or set."""
    for index in writes:
        if index >= len(args):
            return False
        arg = args[index]
        if id(arg) not in tx.private and not is_a(arg, CONTAINER_TYPES):
            return False
    return True


def _fresh(tx: Transaction, rule: policy.CallPolicy, result: Any, args: tuple = (),
           kwargs: Optional[dict] = None) -> Any:
    """``result``, the section's own when ``rule`` says the callable makes a new
    object: not when it handed back one of its arguments (``copy.copy`` of an
    object whose ``__copy__`` returns itself, an enum member), nor when
    application code took part in making it (``json.loads(s,
    object_hook=find)``, ``copy.copy(obj)`` with a ``__reduce__`` of the
    application's): that code may hand back an object others share."""
    if rule.fresh and type(result) not in IMMUTABLE_TYPES \
            and not any(result is arg for arg in args):
        if not any(map(_may_hand_back_shared, args)) \
                and not (kwargs and any(map(_may_hand_back_shared, kwargs.values()))):
            tx.adopt(result)
        elif is_finalized(type(result)):
            # (copy.copy of an application object: maybe not new, so not
            # private; but if new, its finalizer is this attempt's)
            tx.note_made(result)
    return result




def _may_hand_back_shared(arg: Any) -> bool:
    """True for an argument through which application code runs in the call:
    a Python function or method, or an object of an application class."""
    return isinstance(arg, (FunctionType, MethodType)) or type(type(arg)) is not type \
        or bool(type(arg).__flags__ & HEAP_TYPE)


#: Py_TPFLAGS_HEAPTYPE: a class made by a class statement (not a builtin).

#: Uninstrumented callables that compare, hash or format the values inside
#: their arguments: nested containers are read too (see deep_view).
DEEP_READERS: set = {repr, str, ascii, format, sorted, min, max, hash, print,
                     operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                     operator.ge, operator.contains, operator.countOf, operator.indexOf,
                     sum, any, all, math.fsum, heapq.nsmallest, heapq.nlargest,
                     map, filter, itertools.starmap, itertools.filterfalse,
                     itertools.accumulate, itertools.groupby, itertools.compress,
                     itertools.takewhile, itertools.dropwhile}
#: Deep readers whose first argument is the function that reads the items:
#: an instrumented one reads through the barriers (map(f, rows) is then shallow).
_FUNCTION_FIRST = frozenset({map, filter, itertools.starmap, itertools.filterfalse,
                             itertools.takewhile, itertools.dropwhile})
#: Methods of a str (join: of bytes too) that read the values nested in their
#: arguments; the first two also read attributes named in the format ('{0.balance}').
_STR_READERS = {"format": True, "format_map": True, "join": False}
#: Callables whose result reads its arguments later (an iterator, a view).
LAZY_CALLABLES: set = {iter, reversed, enumerate, zip, map, filter, *(
    getattr(itertools, name) for name in (
        "chain", "islice", "cycle", "accumulate", "compress", "dropwhile", "takewhile",
        "filterfalse", "groupby", "starmap", "zip_longest", "pairwise", "batched", "tee")
    if hasattr(itertools, name))}


def _is_lazy(value: Any) -> bool:
    """True for a result that would read a container after the call returned."""
    kind = type(value)
    return kind not in IMMUTABLE_TYPES and (hasattr(kind, "__next__") or kind in _VIEW_TYPES)


_VIEW_TYPES = frozenset({type({}.keys()), type({}.values()), type({}.items()),
                         type(OrderedDict().keys()), type(OrderedDict().values()),
                         type(OrderedDict().items()), memoryview})


def call_reading(tx: Transaction, f: Any, args: tuple, kwargs: dict,
                  also: Any = None, lazy: bool = False, original: Any = None) -> Any:
    """Call ``f`` with the shared containers among its arguments read consistently.

    ``also`` is one more shared container the call reads (the owner of a
    bound method). A container the section wrote is replaced by its
    private copy; one it did not write is read inside a version window,
    or, when the call's result keeps reading it (``lazy``, an iterator),
    replaced by its read shadow. Bound methods of shared containers passed
    as arguments (``max(d, key=d.get)``) are re-bound to the section's
    copy. Values nested in the arguments are recorded for the callables
    that read them (``DEEP_READERS``). ``original`` is what to call
    instead if the section has to become inevitable (``f`` may be bound to
    a private copy, which publishing makes stale).
    """
    original = f if original is None else original
    if _reads_pairs(f):
        args = tuple(pairs_as_read(tx, arg) for arg in args)
    try:
        lazy = lazy or f in LAZY_CALLABLES
        # (filter(None, rows) takes the truth of each row: a nested read)
        deep = f in DEEP_READERS and not (
            f in _FUNCTION_FIRST and args and is_instrumented(args[0]))
        reads_attributes = f in ATTRIBUTE_READERS
        materializing = f in _MATERIALIZING_CALLABLES
    except TypeError:                             # an unhashable callable
        deep = reads_attributes = materializing = False
    if type(bound_self(f)) in (str, bytes) and f.__name__ in _STR_READERS:
        deep, reads_attributes = True, reads_attributes or _STR_READERS[f.__name__]
    compares = _compares_items(f)
    if compares:
        # rows.sort(), rows.index(row): the items are compared by plain code,
        # which reads what is nested in them (the section's own writes too).
        deep = True
        owner = bound_self(f)
        if owner is not None and not record_nested(tx, owner):
            tx.become_inevitable(f"items compared by {policy.qualified_name(f)}")
            return call_direct(tx, original, args, kwargs)
    if (reads_attributes or isinstance(kwargs.get("key"), ATTRIBUTE_READER_TYPES)) \
            and not record_nested(tx, (args, tuple(kwargs.values())), instances=True):
        tx.become_inevitable(f"attributes read by {policy.qualified_name(f)}")
        return call_direct(tx, original, args, kwargs)
    watched: list[int] = []
    # A version window calls f again when a commit lands during the call:
    # only for calls that may be repeated; the others read copies.
    pure = policy.lookup(f).kind == "pure"
    repeatable = pure and _may_call_again(args, kwargs)
    if also is not None:
        if repeatable:
            tx.whole_read_allowed(also)
            watched.append(stripe_of_object(id(also)))
        else:
            # S.union(gen): the first call consumed the generator
            f = getattr(tx.read_shadow(also), f.__name__)
    replaced: dict = {}                 # argument index or keyword -> what the call gets
    for key, arg in _arguments(args, kwargs):
        kind = type(arg)
        if kind in ATOM_TYPES:
            continue
        if id(arg) in tx.private:
            # sum([a, b], []): a container the section made may hold shared ones
            # (and str(error) formats an exception's arguments)
            if deep and (is_a(arg, CONTAINER_TYPES) or isinstance(arg, BaseException)) \
                    and not record_nested(tx, arg):
                tx.become_inevitable(f"deep read by {policy.qualified_name(f)}")
                return call_direct(tx, original, args, kwargs)
            if deep and isinstance(arg, ITERATOR_TYPES):
                # dict(p for p in PAIRS), map(len, iter(ROWS)): the items it yields
                # reach C code one by one
                replaced[key] = _items_read(arg)
            continue
        replacement = arg
        container = is_a(arg, CONTAINER_TYPES)
        log = tx.containers.get(id(arg)) if compares and container else None
        if log is not None and log.changed():
            # rows.index(row) after row.append(x): the section's copy of row is
            # not the row the list holds, and the row it holds is not written yet
            tx.become_inevitable(f"a written {kind.__name__} found by {policy.qualified_name(f)}")
            return call_direct(tx, original, args, kwargs)
        if container and isinstance(arg, defaultdict):
            # operator.getitem(counts, k): C code's lookup of a missing key
            # inserts it; into the section's copy, kept as its write.
            replacement = tx.copy_for_lookups(arg)
            if replacement is None:
                tx.become_inevitable(f"a defaultdict's factory run by {policy.qualified_name(f)}")
                return call_direct(tx, original, args, kwargs)
        elif container:
            if lazy or deep or id(arg) in tx.containers or not repeatable:
                # (a deep reader scans it before the call: a consistent copy;
                # dst.extend(src) must not run twice)
                replacement = tx.read_shadow(arg)
            else:
                tx.whole_read_allowed(arg)
                watched.append(stripe_of_object(id(arg)))
        elif isinstance(arg, READ_INEVITABLY_TYPES):
            read_other_shared(tx, arg)                 # inevitable
            return call_direct(tx, original, args, kwargs)
        elif isinstance(arg, DICT_VIEW_TYPES):
            replacement = read_other_shared(tx, arg)
        elif is_shared_iterator(arg):
            # list(it), sum(gen)...: the C code would consume an iterator (or
            # resume a frame) that existed before the section, for good.
            tx.become_inevitable(ADVANCING_A_SHARED_ITERATOR)
            return call_direct(tx, original, args, kwargs)
        elif shared_defaultdicts_behind(tx, arg):
            # "{k}".format_map(ChainMap({}, DD)): the library __getitem__
            # inserts a missing key into the live defaultdict.
            tx.become_inevitable(f"a defaultdict's factory run through a "
                                 f"{policy.qualified_name(kind)} by {policy.qualified_name(f)}")
            return call_direct(tx, original, args, kwargs)
        elif has_plain_readers(kind) and is_shared_instance(tx, arg):
            # repr(point) of a dataclass: its generated __repr__ reads the attributes.
            if not record_nested(tx, (arg,)):
                tx.become_inevitable(f"attributes read by {policy.qualified_name(kind)}")
                return call_direct(tx, original, args, kwargs)
        elif not isinstance(arg, IMMUTABLE_HOLDERS):
            owner = bound_container(arg)
            if owner is not None and id(owner) not in tx.private:
                if policy.lookup(arg).kind != "pure":
                    # map(EVENTS.append, words): see _hands_over_a_mutator.
                    tx.become_inevitable(f"{policy.qualified_name(arg)} handed to "
                                         f"{policy.qualified_name(f)}")
                    return call_direct(tx, original, args, kwargs)
                replacement = getattr(tx.read_shadow(owner), arg.__name__)
        if deep and (container or isinstance(arg, (*IMMUTABLE_HOLDERS, BaseException))
                     or isinstance(replacement, DICT_VIEW_TYPES)) \
                and not record_nested(tx, replacement):
            tx.become_inevitable(f"deep read by {policy.qualified_name(f)}")
            return call_direct(tx, original, args, kwargs)
        if replacement is not arg:
            replaced[key] = replacement
    final_args, final_kwargs = args, kwargs
    if replaced:
        final_args = tuple(replaced.get(index, arg) for index, arg in enumerate(args))
        final_kwargs = {name: replaced.get(name, arg) for name, arg in kwargs.items()}
    if not watched:
        result = f(*final_args, **final_kwargs)
    else:
        result = _read_window(tx, watched, f, final_args, final_kwargs)
    if replaced:
        originals = {id(replaced[key]): arg for key, arg in _arguments(args, kwargs)
                     if key in replaced}
        # A pure call stores nothing in its arguments: only its result is
        # looked at; the copies handed over are never (len(copy) of a big
        # dict the section wrote stays O(1)).
        touched = () if pure else tuple(
            container for container in (bound_self(f), *final_args)
            if id(container) not in originals)
        result = _restore_identity(originals, result, *touched)
    if not lazy and not materializing and _is_lazy(result):
        # An iterator or view that may read a shared container later.
        if not repeatable:
            # L.pop() of a list of iterators, max(gen, key=k): the call
            # changed something, consumed an argument or ran application
            # code; a second call would do it twice.
            if not pure:
                return result          # a mutator's result: an item, not a view
            tx.become_inevitable(f"a lazy result of {policy.qualified_name(original)}")
            return result
        # Call again on copies (a pure reader of plain arguments).
        return call_reading(tx, f, args, kwargs, also=None, lazy=True) if also is None else \
            call_reading(tx, getattr(tx.read_shadow(also), f.__name__), args, kwargs, lazy=True,
                          original=f)
    return result


#: Callables whose lazy result reads only what they copied from their
#: arguments when called (``product`` and the others make tuples first).
_MATERIALIZING_CALLABLES: set = {itertools.product, itertools.combinations,
                                 itertools.combinations_with_replacement,
                                 itertools.permutations, itertools.repeat}


def _may_call_again(args: tuple, kwargs: dict) -> bool:
    """True if calling a pure reader a second time with these arguments does
    nothing the first call did not: every argument is a plain value or a
    container of the standard library -- not an iterator (which the first
    call consumed), a callable or an instance of another class (application
    code, its ``__iter__`` or ``key``, run again)."""
    for _, arg in _arguments(args, kwargs):
        kind = type(arg)
        if kind not in ATOM_TYPES and (kind.__module__ not in _REPEATABLE_MODULES
                                       or hasattr(kind, "__next__") or callable(arg)):
            return False
    return True


#: Modules whose containers a call may read twice (their methods are C code).
_REPEATABLE_MODULES = frozenset({"builtins", "collections"})


#: Iterators a section may hand to a reader of nested values.
ITERATOR_TYPES = (GeneratorType, collections.abc.Iterator)


def _items_read(iterator: Any) -> Any:
    """The items of ``iterator`` (the section's own), each read as a reader of
    nested values reads its arguments: what they hold recorded, or the
    section made inevitable first when it wrote some of it (then plain
    code sees its writes). The items themselves are handed on, not copies:
    a consumer may give them back (``filter``)."""
    for item in iterator:
        tx = current()
        if tx is not None and not tx.inevitable and type(item) not in ATOM_TYPES \
                and not record_nested(tx, (item,)):
            tx.become_inevitable("an item written by the section, read by plain code")
        yield item


def _reads_pairs(f: Any) -> bool:
    """True for the callables whose C code unpacks the items of a sequence of
    pairs itself: ``dict(pairs)``, ``OrderedDict(pairs)``, ``defaultdict(f,
    pairs)``, ``d.update(pairs)``."""
    if f is dict or f is OrderedDict or f is defaultdict:
        return True
    return type(f) is BuiltinFunctionType and f.__name__ == "update" \
        and isinstance(f.__self__, dict)


def pairs_as_read(tx: Transaction, arg: Any) -> Any:
    """The pairs ``dict(arg)`` or ``update(arg)`` unpacks, each shared list among
    them as the section reads it (its copy, its read recorded): ``dict(PAIRS)``
    after ``PAIRS[0][1] = 99`` sees 99. A sequence (shared, or the section's
    own, or an iterator of its own, consumed here as dict would) becomes a
    list; an iterator of its own is read pair by pair as dict consumes it
    (each pair inserted before the next is asked for: a generator reading
    ``len(d)``, or raising half-way, sees what plain Python shows); a
    mapping, or anything else, is returned as it is."""
    if type(arg) in (list, deque) and id(arg) not in tx.private:
        items = tx.read_shadow(arg)
    elif type(arg) in (list, tuple, deque):
        items = arg
    elif isinstance(arg, ITERATOR_TYPES) and id(arg) in tx.private:
        return _pairs_read_one_by_one(arg)
    elif isinstance(arg, DICT_VIEW_TYPES):
        items = arg = list(read_other_shared(tx, arg))
        tx.adopt(arg)
    else:
        return arg
    if not any(type(item) is list and id(item) not in tx.private for item in items):
        return arg
    pairs = [tx.read_shadow(item) if type(item) is list and id(item) not in tx.private
             else item for item in items]
    tx.adopt(pairs)
    return pairs


def _pairs_read_one_by_one(iterator: Any) -> Any:
    """The pairs of the section's own ``iterator``, each shared ``[key, value]``
    list among them as the section reads it (its copy), one at a time."""
    for item in iterator:
        tx = current()
        if type(item) is list and tx is not None and not tx.inevitable \
                and id(item) not in tx.private:
            item = tx.read_shadow(item)
        yield item


def _restore_identity(originals: dict[int, Any], result: Any, *touched: Any) -> Any:
    """Give back the objects that a call kept or returned, for the copies it was handed.

    call_reading hands a callee the section's copy of a container it wrote,
    so that the callee reads the section's writes; but a callee may keep
    its argument (``index.append(batch)``, ``dict(items=batch)``) or return
    it (``min(q1, q2, key=len)``), and the copy must not escape: the next
    write through it would be lost. ``originals`` maps id(copy) to the
    argument; the result, and the top level of the containers the call
    touched (the copy its method was bound to, its other arguments), get
    the argument back wherever they hold the copy.
    """
    if id(result) in originals:
        return originals[id(result)]
    for container in (result, *touched):
        if isinstance(container, (list, deque)):
            for index, item in enumerate(container):
                if id(item) in originals:
                    container[index] = originals[id(item)]
        elif isinstance(container, dict):
            for key, item in list(container.items()):
                if id(item) in originals:
                    container[key] = originals[id(item)]
    return originals.get(id(result), result)


def _arguments(args: tuple, kwargs: dict) -> Any:
    """(index or keyword, value) for every positional and keyword argument."""
    yield from enumerate(args)
    if kwargs:
        yield from kwargs.items()


def _read_window(tx: Transaction, watched: list[int], f: Any, args: tuple, kwargs: dict) -> Any:
    """``f(*args, **kwargs)``, consistent with the snapshot for every stripe in ``watched``.

    ``f`` is called once: a commit landing on one of the stripes during the
    call aborts the attempt rather than calling again, since the call may
    run application code (the ``__hash__`` of the items of a list it is
    given, a key function) or change what it is given, once per call.
    """
    tx.tick()
    if faults.ENABLED:
        faults.strike(tx, "read")
    while True:
        before = [VERSIONS[stripe] for stripe in watched]
        stale = next((stripe for stripe, version in zip(watched, before) if version > tx.rv),
                     None)
        if stale is None:
            break
        tx.extend(stale)
    try:
        return f(*args, **kwargs)
    finally:
        # (also when f raised: an exception from a torn read is an abort)
        for stripe, version in zip(watched, before):
            if VERSIONS[stripe] != version:
                tx.abort("write-read conflict", stripe)
        tx.reads.update(watched)


def apply(f: Any, args: tuple, kwargs: dict) -> Any:
    return f(*args, **kwargs)


CLASS_POLICIES: dict[type, policy.CallPolicy] = {}


def class_policy(klass: type) -> policy.CallPolicy:
    """Calling a class defined by application code (or a builtin exception) is safe."""
    rule = CLASS_POLICIES.get(klass)
    if rule is None:
        rule = policy.IRREVOCABLE
        if _class_is_safe(klass):
            # (a metaclass __call__ may hand back an object that already
            # exists: a singleton is not the section's own)
            fresh = (_new_makes_new_objects(klass) or klass.__module__ == "builtins") \
                and type(klass).__call__ is type.__call__
            rule = policy.PURE_FRESH if fresh else policy.PURE
        CLASS_POLICIES[klass] = rule
    return rule


def _new_makes_new_objects(klass: type) -> bool:
    """True when ``klass.__new__`` is object's or a builtin exception's: a new
    object each call (an application exception's ``__new__`` is the one of
    the builtin exception it derives from)."""
    maker = getattr(klass.__new__, "__self__", None)
    return maker is object or (isinstance(maker, type) and issubclass(maker, BaseException)
                               and maker.__module__ == "builtins")


_plain_builders: dict[type, bool] = {}


def _builds_plainly(klass: type) -> bool:
    """True for a class of application code whose other bases are object and the
    builtin exceptions: building one runs only instrumented ``__new__`` and
    ``__init__`` (which read through the barriers) and the builtins' own,
    which keep their arguments without reading them."""
    answer = _plain_builders.get(klass)
    if answer is None:
        answer = _plain_builders[klass] = all(map(_builds_by_itself, klass.__mro__))
    return answer


def _finalized_and_built_by_object(klass: type) -> bool:
    """A class with a ``__del__`` whose instances ``object.__new__`` makes (so a new one)."""
    return (type(klass) is type and klass.__new__ is object.__new__
            and klass.__init__ is not object.__init__ and hasattr(klass, "__del__"))


def _build_registered(tx: Transaction, klass: type, args: tuple, kwargs: dict) -> Any:
    """``klass(*args, **kwargs)``, the new object registered as made by this attempt
    as soon as it exists: if the attempt aborts inside ``__init__``, the object
    dies with it and so does its ``__del__`` (section._finalize_now_or_after),
    as in a serial run, which never made it."""
    obj = object.__new__(klass)
    tx.mark_private(obj)
    klass.__init__(obj, *args, **kwargs)
    return obj


def _builds_by_itself(base: type) -> bool:
    if base.__module__ == "builtins":
        return base is object or issubclass(base, BaseException)
    if not base.__flags__ & HEAP_TYPE:
        return False                      # a C type (itertools.product): it reads
    for name in ("__new__", "__init__"):
        method = base.__dict__.get(name)
        if isinstance(method, staticmethod):
            method = method.__func__
        if method is not None and not is_instrumented(method):
            return False
    return True


#: Py_TPFLAGS_HEAPTYPE: a class made by a class statement (or a C type made like one).

def _plain_init(f: Any) -> bool:
    """``super().__init__`` of an object whose class builds plainly (a bound slot wrapper)."""
    return type(f) is _METHOD_WRAPPER and f.__name__ == "__init__" \
        and _builds_plainly(type(f.__self__))


_METHOD_WRAPPER = type(object().__init__)


def _class_is_safe(klass: type) -> bool:
    if issubclass(klass, BaseException):
        return True          # building an exception (tornado's HTTPError too) has no effect
    for name in ("__new__", "__init__"):
        for base in klass.__mro__:
            method = base.__dict__.get(name)
            if method is None:
                continue
            if isinstance(method, staticmethod):
                method = method.__func__
            if base.__module__ == "builtins":
                break
            if is_instrumented(method):
                break
            return False
    return type(klass) is type or all(
        type(m) is not FunctionType or m.__code__ in INSTRUMENTED_CODES
        for m in (type(klass).__dict__.get("__call__"),) if m is not None)


def call_direct(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """A call outside optimistic mode: in place, bumping the containers it mutates."""
    rule = policy.lookup(f)
    if _makes_a_class(f, args):
        args = _namespace_audited(args)
    stand_ins = None
    if _names_its_caller(f):
        f = _from_the_application(f)
    if tx is not None and WORLD_LOCK.held_by_current_thread():
        for counts in _defaultdicts_handed_over(tx, f, args, kwargs):
            hold_lookups_in_place(counts)
    if rule.kind == "special":
        return rule.handler(tx, f, args, kwargs)
    if WORLD_LOCK.held_by_current_thread() and (_hands_over_a_mutator(tx, args, kwargs)
                                                 or _hands_out_an_instance_dict(f, args)):
        # map(EVENTS.append, words): plain code will change the container in
        # place, when and as often as it likes (list() runs the map later).
        # attrgetter("__dict__")(obj): the live dict of an instance, whose
        # changes obj.name reads without a version (as barriers.instance_dict).
        # Every section that overlaps this one aborts: it holds RESHAPE_STRIPE.
        hold((RESHAPE_STRIPE,))
    if f is warnings.warn:
        f = _warn_from_the_application
    if rule.kind == "pure" and tx is not None and (args or kwargs):
        if WORLD_LOCK.held_by_current_thread() and _hands_over_library_python(args, kwargs):
            # The library function runs in place (now, or later when the map
            # is consumed): what the call reaches is held from now on.
            return direct_call_reaching(tx, f, args, kwargs)
        # map(setattr, objects, names, values) in an inevitable section: each
        # setattr must bump the versions of what it writes, as the barrier's
        # does, or an optimistic reader of those objects commits over it.
        if not _sees_identity(f):
            args, kwargs, stand_ins = _arguments_through_the_barrier(args, kwargs, f)
    if rule.kind == "mutates":
        owner = bound_container(f)
        targets = [owner] if owner is not None and 0 in rule.writes else [
            args[i] for i in rule.writes if i < len(args)]
        shared = [t for t in targets if isinstance(t, CONTAINER_TYPES)
                  and (tx is None or id(t) not in tx.private)]
        if shared:
            return direct_container_call(shared, f, args, kwargs)
    elif rule.kind == "irrevocable" and WORLD_LOCK.held_by_current_thread() \
            and not _only_writes_out(f):
        # Unknown code may change in place the shared containers it is given,
        # and the attributes of the instances (a dataclass's generated
        # __init__ called again): partial(EVENTS.append)("b"),
        # methodcaller("append", x)(L), STATS.__init__(). Without
        # new versions, an optimistic section that read them would commit
        # its own copy over the change. (Only under W, as in an inevitable
        # section: plain code outside sections is not wrapped in W, which
        # the callee may wait for.)
        return direct_call_reaching(tx, f, args, kwargs)
    if _is_logging_call(f):
        kwargs = {**kwargs, "stacklevel": kwargs.get("stacklevel", 1) + _engine_frames_above()}
    result = f(*args, **kwargs)
    return _callables_given_back(result, stand_ins) if stand_ins else result


#: Library callables that name the module of their caller, found from its
#: frame (``sys._getframe(1).f_globals["__name__"]``, ``_getframemodulename``):
#: the ``__module__`` of the class or type they make.
_CALLER_NAMERS = frozenset({
    collections.namedtuple, typing.NamedTuple, typing.TypedDict, typing.NewType,
    typing.TypeVar, typing.ParamSpec, typing.TypeVarTuple, dataclasses.make_dataclass,
    *((typing.TypeAliasType,) if hasattr(typing, "TypeAliasType") else ())})


def _names_its_caller(f: Any) -> bool:
    # (functions and classes hash cheaply; other callables are not among them)
    if type(f) is FunctionType:
        return f in _CALLER_NAMERS
    return isinstance(f, type) and (f in _CALLER_NAMERS or isinstance(f, enum.EnumType))


def _apply(f: Any, *args: Any, **kwargs: Any) -> Any:
    return f(*args, **kwargs)


def _from_the_application(f: Any) -> Any:
    """``f``, called from a frame whose globals are those of the application
    code that called it (not the call barrier's): a library that names its
    caller's module (``namedtuple("Point", ...)``, ``Enum("Color", ...)``,
    ``TypeVar``) names the application's, as in plain Python."""
    frame = application_frame(sys._getframe(1))[0]
    if frame is None:
        return f
    caller = FunctionType(_apply.__code__, frame.f_globals, "_apply")
    return functools.partial(caller, f)


def _defaultdicts_handed_over(tx: Transaction, f: Any, args: tuple, kwargs: dict) -> list:
    """The shared ``defaultdict``s among the arguments, or that ``f`` or an
    argument is bound to (``DD.__getitem__``), or behind a library mapping
    among them (:func:`shared_defaultdicts_behind`): C code looking up a
    missing key in one (``operator.getitem``, ``str.format_map``,
    ``map(DD.__getitem__, keys)``) inserts it."""
    return _shared_defaultdicts_among(tx, [
        arg.__self__ if type(arg) is BuiltinFunctionType else arg
        for arg in (f, *args, *kwargs.values())])


#: Values that are no library mapping (the common arguments, passed over at once).
_NOT_LIBRARY_MAPPINGS = (str, int, float, bytes, tuple, list, dict, set, frozenset,
                         type(None), FunctionType, BuiltinFunctionType, MethodType)
#: How deep shared_defaultdicts_behind looks into mappings of mappings.
_MAPPINGS_DEPTH = 4


def shared_defaultdicts_behind(tx: Transaction, obj: Any, depth: int = 0) -> list:
    """The shared ``defaultdict``s a library mapping looks keys up in with
    Python code the barriers do not see: the ``maps`` of a
    ``collections.ChainMap``, the ``data`` of a ``UserDict``, and so on down.
    ``"{k}".format_map(CM)`` or ``"%(k)s" % CM`` runs ``CM.__getitem__``,
    whose lookup of a missing key in a nested defaultdict inserts it in place.
    """
    kind = type(obj)
    # (type() and issubclass only: isinstance and vars() would ask the
    # object itself, through a __getattribute__ of the application's)
    if depth > _MAPPINGS_DEPTH or issubclass(kind, type) or not has_plain_operators(kind):
        return []
    try:
        fields = object.__getattribute__(obj, "__dict__").values()
    except (AttributeError, TypeError):      # no __dict__ (slots, C types)
        return []
    held = [item for value in list(fields)
            for item in (value if type(value) in (list, tuple) else (value,))]
    return _shared_defaultdicts_among(tx, held, depth + 1)


def _shared_defaultdicts_among(tx: Transaction, values: list, depth: int = 0) -> list:
    """The shared defaultdicts among ``values`` and behind the library mappings among them."""
    found = []
    for value in values:
        if type(value) is defaultdict:
            if id(value) not in tx.private:
                found.append(value)
        elif not issubclass(type(value), _NOT_LIBRARY_MAPPINGS):
            found.extend(shared_defaultdicts_behind(tx, value, depth))
    return found


def _hands_over_library_python(args: tuple, kwargs: dict) -> bool:
    """True if an argument is a Python function (or method, or partial of one)
    that is neither instrumented nor known to the policy table: C code
    given it would run it past every barrier."""
    for _, arg in _arguments(args, kwargs):
        target = arg.func if type(arg) is functools.partial else arg
        if type(target) is MethodType:
            target = target.__func__
        if type(target) is FunctionType and target.__code__ not in INSTRUMENTED_CODES \
                and not is_engine_code(target.__code__) \
                and policy.lookup(target).kind != "pure":
            return True
    return False


#: The methods of loggers (and the module's functions) that take ``stacklevel``.
_LOGGING_CALLS = frozenset(("debug", "info", "warning", "warn", "error", "exception",
                            "critical", "fatal", "log"))


def _is_logging_call(f: Any) -> bool:
    """``log.warning``, ``logging.info``...: a record whose caller must be the user's line."""
    if getattr(f, "__name__", None) not in _LOGGING_CALLS:
        return False
    owner = getattr(f, "__self__", None)
    return is_a(owner, (logging.Logger, logging.LoggerAdapter)) or (
        owner is None and getattr(f, "__module__", None) == "logging")


def _warn_from_the_application(*args: Any, stacklevel: int = 1, **kwargs: Any) -> None:
    """``warnings.warn`` whose ``stacklevel`` counts from the application's frame
    that called it (a helper's ``stacklevel=2`` names its caller's line, not
    the call barrier's), over the engine frames between (and, from 3.12 on,
    over those between the application's frames too: a pure-Python call barrier)."""
    if sys.version_info >= (3, 12):
        # (+1: this frame, where warn's count starts, is the engine's)
        kwargs["skip_file_prefixes"] = (*kwargs.get("skip_file_prefixes", ()), ENGINE_DIR)
        warnings.warn(*args, stacklevel=stacklevel + 1, **kwargs)
    else:
        warnings.warn(*args, stacklevel=stacklevel + _engine_frames_above(), **kwargs)


def _engine_frames_above() -> int:
    """How many engine frames stand between the caller of this function's caller
    and the application code that made the call (logging's ``stacklevel``
    then names the application's line, not the barrier's)."""
    return application_frame(sys._getframe(1))[1]


def _hands_over_a_mutator(tx: Optional[Transaction], args: tuple, kwargs: dict) -> bool:
    """True if an argument is a mutating method of a shared container."""
    for _, arg in _arguments(args, kwargs):
        owner = bound_container(arg)
        if owner is not None and (tx is None or id(owner) not in tx.private) \
                and policy.lookup(arg).kind != "pure":
            return True
    return False


#: Calls that return an instance's live ``__dict__`` (or a tuple holding it):
#: since 3.11 ``object.__getstate__`` gives the dict itself, and the reduce
#: protocol passes it on as the state.
_STATE_GETTERS = frozenset(("__getstate__", "__reduce__", "__reduce_ex__", "_reduce_ex"))


def _hands_out_an_instance_dict(f: Any, args: tuple) -> bool:
    """``operator.attrgetter("__dict__")``, ``object.__getattribute__(obj, "__dict__")``,
    ``obj.__getstate__()`` and the reduce protocol, ``Cls.__dict__["__dict__"].__get__(obj)``."""
    if type(f) is operator.attrgetter:
        return any("__dict__" in name.split(".") for name in f.__reduce__()[1])
    name = getattr(f, "__name__", None)
    if name in _STATE_GETTERS:
        return True
    if name == "__get__":
        return getattr(getattr(f, "__self__", None), "__name__", None) == "__dict__"
    return name == "__getattribute__" and any(
        type(arg) is str and arg == "__dict__" for arg in args)


#: Library functions that only send output (a WebSocket message): irrevocable,
#: but they change no application state, so an inevitable section calls them
#: in place without holding all they reach (``reach``: walking a handler's
#: connection, loop and application stalled every other section). Filled by
#: the event loop (``tornado_stm.loop.request.install``).
OUTPUT_ONLY: set = set()


def _only_writes_out(f: Any) -> bool:
    """print and logging: unknown to the table, but they change no application
    state; and what ``OUTPUT_ONLY`` names."""
    return f is print or is_a(getattr(f, "__self__", None), logging.Logger) \
        or getattr(f, "__module__", None) == "logging" \
        or getattr(f, "__func__", None) in OUTPUT_ONLY


#: Elements deep_view() looks at inside a value before it gives up and makes
#: the section inevitable.
DEEP_VIEW_BUDGET = 100_000


def record_nested(tx: Transaction, root: Any, instances: bool = False) -> bool:
    """Record reads of the shared values nested in ``root``; False if that cannot be done.

    Nested shared containers are recorded, and so are the attributes of
    shared instances that plain code will read: every instance when
    ``instances`` is true (``copy.copy``, an ``attrgetter`` key), otherwise
    those whose class compares or formats them with uninstrumented code
    (a ``dataclass``). False when the section wrote one of them (plain code
    would miss that write: the caller becomes inevitable) or a nested
    container changes while it is scanned ("changed size during iteration").
    """
    if _C_DEEPLY_PRIVATE is not None and _C_DEEPLY_PRIVATE(tx, root, DEEP_VIEW_BUDGET):
        return True             # built by the section from immutable values: nothing to record
    try:
        return _scan_nested(tx, root, instances)
    except RuntimeError:
        return False


def _scan_nested(tx: Transaction, root: Any, instances: bool) -> bool:
    if isinstance(root, IMMUTABLE_HOLDERS):
        root = held_items(root)
    elif isinstance(root, BaseException):
        root = (root,)                  # not iterable: its arguments are walked below
    stack = [root]
    budget = DEEP_VIEW_BUDGET
    while stack:
        item = stack.pop()
        budget -= len(item)
        if budget < 0:
            return False
        is_dict = isinstance(item, dict)
        # A row of numbers or strings (a grid's) is passed over at C speed.
        if ATOM_TYPES.issuperset(map(type, item.values() if is_dict else item)) and (
                not is_dict or ATOM_TYPES.issuperset(map(type, item))):
            continue
        for element in (item.items() if is_dict else item):
            kind = type(element)
            if kind in ATOM_TYPES:
                continue
            if kind in HOLDING_IMMUTABLE_TYPES:
                stack.append(element)
            elif isinstance(element, CONTAINER_TYPES):
                if id(element) in tx.private:
                    stack.append(element)           # it may hold shared values
                    continue
                log = tx.containers.get(id(element))
                if log is not None and log.changed():
                    return False
                tx.touch(element)
                stack.append(element)
            elif isinstance(element, MUTABLE_BUFFER_TYPES) and id(element) not in tx.private:
                return False                        # no versions: the caller goes inevitable
            else:
                if isinstance(element, IMMUTABLE_HOLDERS):
                    stack.append(held_items(element))   # a namedtuple's items
                elif isinstance(element, BaseException):
                    stack.append(element.args)          # str(error) formats them
                if (instances or has_plain_readers(kind)) and is_shared_instance(tx, element):
                    values = record_instance(tx, element)
                    if values is None:
                        return False
                    stack.append(values)
    return True


#: Uninstrumented callables that read the attributes of the objects they are
#: given (or of the items of a container given to min, max, sorted...) directly.
ATTRIBUTE_READERS: set = {copy.copy}
ATTRIBUTE_READER_TYPES = (operator.attrgetter, operator.methodcaller)
#: Special methods through which plain code reads an object's attributes.
_READING_SPECIAL_METHODS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                            "__hash__", "__repr__", "__str__", "__format__")
_plain_readers: dict[type, bool] = {}


def making_a_class(tx: Optional[Transaction], bases: Any) -> None:
    """Before a section makes a class with ``bases`` (a class statement in a
    function, ``type(name, bases, ns)``, a metaclass called so). CPython
    enters the new class in each base's ``__subclasses__()`` in place, where
    other sections see it at once, and where an attempt that aborts leaves
    it: a section making a subclass of a Python class (the application's
    plugin base, a library's handler class) becomes inevitable first."""
    if tx is not None and not tx.inevitable and isinstance(bases, tuple) and any(
            isinstance(base, type) and base.__flags__ & HEAP_TYPE for base in bases):
        tx.become_inevitable("a subclass of a Python class made in a section")


def checks_by_reading(kinds: Any) -> bool:
    """True if an ``isinstance`` check against ``kinds`` may read the object's attributes."""
    if isinstance(kinds, tuple):
        return any(checks_by_reading(kind) for kind in kinds)
    check = getattr(type(kinds), "__instancecheck__", None)
    if check is abc.ABCMeta.__instancecheck__:
        # An ABC asks its __subclasshook__ and caches the answer in place: an
        # application's hook may read shared state (the answer of an attempt
        # that aborts would stay cached).
        return any(is_instrumented(getattr(klass.__dict__.get("__subclasshook__"), "__func__", None))
                   for klass in kinds.__mro__)
    return check is not None and check not in _CHECKS_BY_TYPE


#: Metaclass checks that answer from the class and its registry alone.
_CHECKS_BY_TYPE = (type.__instancecheck__, abc.ABCMeta.__instancecheck__)


def has_plain_readers(kind: type) -> bool:
    """True when ``kind`` compares, hashes or formats its instances with Python code
    that is not instrumented (the ``__eq__`` and ``__repr__`` a ``dataclass``
    generates): such code reads attributes without barriers."""
    answer = _plain_readers.get(kind)
    if answer is None:
        answer = issubclass(kind, _DICT_READING_C_TYPES) or any(
            not is_instrumented(method)
            for method in python_methods(kind, _READING_SPECIAL_METHODS))
        _plain_readers[kind] = answer
    return answer


#: The special methods that operators and ``**`` run, and those ``+=`` & co. run.
_OPERATOR_SPECIAL_METHODS = tuple(f"__{prefix}{name}__" for name in (
    "add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift",
    "and", "or", "xor") for prefix in ("", "r")) + (
    "__neg__", "__pos__", "__invert__", "__abs__", "__getitem__", "__iter__", "__len__",
    "keys", "__contains__")
_IN_PLACE_SPECIAL_METHODS = tuple(f"__i{name}__" for name in (
    "add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift",
    "and", "or", "xor"))
_plain_operators: dict[tuple[type, bool], bool] = {}


def has_plain_operators(kind: type, in_place: bool = False) -> bool:
    """True when ``kind``'s operators (with ``in_place``, its ``+=`` & co.) run
    Python code that is not instrumented (``UserList.__add__``,
    ``UserDict.__ior__``): such code reads, or changes, the instance's
    attributes without barriers."""
    answer = _plain_operators.get((kind, in_place))
    if answer is None:
        names = _IN_PLACE_SPECIAL_METHODS if in_place else _OPERATOR_SPECIAL_METHODS
        answer = _plain_operators[kind, in_place] = any(
            not is_instrumented(method) for method in python_methods(kind, names))
    return answer


def is_shared_instance(tx: Optional[Transaction], obj: Any) -> bool:
    """True for an instance of a Python class (not a class, a container or a
    function), or of a C type that keeps its attributes in a dict
    (``SimpleNamespace``), that the section (if any) did not make."""
    kind = type(obj)
    return bool((kind.__flags__ & HEAP_TYPE or kind in _DICT_READING_C_TYPES)
                and not isinstance(obj, (type, *CONTAINER_TYPES))
                and (tx is None or id(obj) not in tx.private))


#: C types whose ==, < and repr read the instance's attribute dict in C.
_DICT_READING_C_TYPES = (SimpleNamespace,)


def record_instance(tx: Transaction, obj: Any) -> Optional[list]:
    """Before plain code reads the attributes of a shared ``obj``: record reads of
    them all, consistent with the snapshot, and return their values (to scan
    in turn); None when the section wrote one of them (the write is buffered
    where plain code cannot see it)."""
    if id(obj) in tx.attrs:
        return None
    return [tx.versioned(stripe_of_key(id(obj), name), getattr, obj, name, None)
            for name in attribute_names(obj)]
