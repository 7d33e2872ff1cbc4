"""How reading or writing ``obj.name`` behaves, per (type, name), cached.

An attribute access in plain Python may run code: a property getter, a
descriptor's ``__get__``, a custom ``__setattr__``. The barriers must
know whether that code is instrumented (then it simply runs, its own
accesses are barriered), known safe by the policy table, or unknown (then
the section becomes inevitable before running it). This module answers
that question once per (type, name) and caches the answer. The answer
holds while the class keeps the same kind of thing under ``name``: a write
to a class that changes that (``reshapes_class``) is made by an inevitable
section holding RESHAPE_STRIPE, and ``forget`` drops the cached answers.
"""

from __future__ import annotations

import threading
from types import FunctionType, MemberDescriptorType, ModuleType
from typing import Any, Optional

from tornado_stm.stm import policy
from tornado_stm.stm.registry import is_instrumented
from tornado_stm.stm.threadcopies import ThreadCopies

# Read kinds.
PLAIN = 0         # an instance attribute or a method: versioned per (obj, name)
CLASS_VALUE = 1   # a plain value found in a class: versioned per (obj, name) and (class, name)
RUN = 2           # instrumented or safe code runs: call getattr() as is
UNSAFE = 3        # unknown code would run: become inevitable first
IMMUTABLE = 4     # an immutable builtin value: nothing to track
MODULE = 5        # a module attribute: a key of the module's globals
NONDATA = 6       # an unknown non-data descriptor: safe only if the instance dict has the name
TYPE_ATTR = 7     # an attribute of a class object: versioned along the class's MRO
SUPER = 8         # an attribute found through super(): versioned along the rest of the MRO
NONDATA_CODE = 9  # an instrumented or safe non-data descriptor: the instance's own value first

# Write kinds.
W_PLAIN = 0       # goes to the redo log
W_RUN = 1         # an instrumented property setter or __setattr__: call it
W_UNSAFE = 2      # unknown code: inevitable first

IMMUTABLE_TYPES = frozenset({int, float, complex, str, bytes, bool, type(None), tuple,
                             frozenset, range, slice, type(Ellipsis)})

_SAFE_SETATTRS = (object.__setattr__, type.__setattr__)
_SAFE_DELATTRS = (object.__delattr__, type.__delattr__)
_lock = threading.Lock()
READ_CACHE: dict[tuple[type, str], tuple[int, Optional[type]]] = {}
_write_cache: dict[tuple[type, str], int] = {}
_delete_cache: dict[tuple[type, str], int] = {}
_refusal_cache: dict[tuple[type, str], bool] = {}
_CACHES = (READ_CACHE, _write_cache, _delete_cache, _refusal_cache)
#: Bumped by forget(): an answer computed before it is not cached.
_generation = [0]


_ABSENT = object()


def find_class_attribute(klass: type, name: str) -> tuple[Optional[type], object]:
    """(the class of ``klass``'s MRO that holds ``name``, its value), or (None, None).

    One lookup per class: a coroutine step asks without W
    (``barriers.method_to_call``), while another thread may delete the name.
    """
    for base in klass.__mro__:
        value = base.__dict__.get(name, _ABSENT)
        if value is not _ABSENT:
            return base, value
    return None, None


def _code_is_safe(fn: object) -> bool:
    return is_instrumented(fn) or policy.lookup(fn).kind == "pure"


#: Each thread's copies of the caches (see threadcopies).
_per_thread = ThreadCopies()


def _cached(cache: dict, classify: Any, klass: type, name: str) -> Any:
    """``classify(klass, name)``, cached in ``cache`` and in this thread's copy of it.

    A thread looks in its own copy first (``threadcopies``: the shared
    table, read at every attribute barrier, was the A-star game's hottest
    lock). ``forget`` bumps the generation, which drops every thread's copies.
    """
    generation = _generation[0]
    copy = _per_thread.of(id(cache), generation)
    key = (klass, name)
    cached = copy.get(key)
    if cached is None:
        cached = cache.get(key)
        if cached is None:
            cached = classify(klass, name)
            with _lock:
                if generation == _generation[0]:
                    cache[key] = cached
        copy[key] = cached
    return cached


def forget(klass: type) -> None:
    """Drop the answers about ``klass``, its subclasses and, for a metaclass,
    its classes: ``klass`` is about to change what one of its names holds."""
    with _lock:
        _generation[0] += 1
        for cache in _CACHES:
            for key in [key for key in cache if _depends_on(key[0], klass)]:
                del cache[key]


def _depends_on(kind: type, klass: type) -> bool:
    return klass in kind.__mro__ or klass in type(kind).__mro__


def is_plain_value(value: Any) -> bool:
    """A class attribute Python hands out as it is (no ``__get__``)."""
    return not hasattr(type(value), "__get__")


def reshapes_class(klass: type, name: str, value: Any) -> bool:
    """Whether setting (``value``) or deleting (``DELETED``, anything without
    ``__get__`` will do) ``klass.name`` changes what kind of thing instances
    and subclasses find under ``name``, so cached kinds go stale.

    Only a plain value replacing or removing a plain value is not: a method,
    a descriptor or a special method (which also sets a type slot) coming or
    going is, and so is a name the class and its bases did not define (its
    instances' reads of it were classified as their own attributes).
    """
    if name.startswith("__") and name.endswith("__"):
        return True
    if not is_plain_value(value):
        return True
    owner, current = find_class_attribute(klass, name)
    return owner is None or not is_plain_value(current)


def read_kind(klass: type, name: str) -> tuple[int, Optional[type]]:
    """(kind, owner class) for reading attribute ``name`` of an instance of ``klass``."""
    return _cached(READ_CACHE, _classify_read, klass, name)


def _classify_read(klass: type, name: str) -> tuple[int, Optional[type]]:
    if klass in IMMUTABLE_TYPES:
        return IMMUTABLE, None
    if issubclass(klass, ModuleType):
        return MODULE, None
    if name == "__dict__":
        return UNSAFE, None      # the live dict would escape the barriers
    if klass is super:
        return SUPER, None
    getattribute = find_class_attribute(klass, "__getattribute__")[1]
    if getattribute not in (object.__getattribute__, type.__getattribute__) \
            and (not _code_is_safe(getattribute) or issubclass(klass, type)):
        # A metaclass's own __getattribute__ ends in type.__getattribute__,
        # which reads the class's dict in place, past the section's log.
        return UNSAFE, None
    owner, attr = find_class_attribute(klass, name)
    if issubclass(klass, type) and not _is_data_descriptor(attr):
        # Cls.x on a class object: Sub.x may come from Base, so the read
        # depends on every class of the MRO up to the one defining x; the
        # metaclass answers only after them (or first, with a data descriptor).
        return TYPE_ATTR, None
    if owner is None:
        return PLAIN, None
    attr_type = type(attr)
    if attr_type in (FunctionType, staticmethod, classmethod, MemberDescriptorType):
        return PLAIN, None
    if attr_type is property:
        # (a "pure" C getter, property(len), still reads the instance: a
        # container subclass's live items, its attributes in place)
        return (RUN, None) if attr.fget is None or is_instrumented(attr.fget) or (
            isinstance(attr.fget, FunctionType) and _code_is_safe(attr.fget)) else (UNSAFE, None)
    getter = getattr(attr_type, "__get__", None)
    if getter is None:
        return CLASS_VALUE, owner
    data = _is_data_descriptor(attr)
    if _code_is_safe(getter) or policy.lookup(attr).kind == "pure":
        # A non-data descriptor is shadowed by the instance's own value,
        # which must be read through the log.
        return (RUN, None) if data or not klass.__dictoffset__ else (NONDATA_CODE, owner)
    if data:
        return UNSAFE, None
    if attr_type.__module__ == "builtins":
        return PLAIN, None       # C method descriptors and the like: binding is pure
    return NONDATA, None


def _is_data_descriptor(attr: object) -> bool:
    return hasattr(type(attr), "__set__") or hasattr(type(attr), "__delete__")


def write_kind(klass: type, name: str, deleting: bool = False) -> int:
    """How ``obj.name = value`` (``del obj.name`` when ``deleting``) behaves for
    an instance of ``klass``."""
    if deleting:
        return _cached(_delete_cache, _classify_delete, klass, name)
    return _cached(_write_cache, _classify_write, klass, name)


def refuses_attribute(klass: type, name: str) -> bool:
    """True when an instance of ``klass`` cannot hold ``name``: no instance
    dict, and no slot or data descriptor of that name."""
    return _cached(_refusal_cache, _classify_refusal, klass, name)


def _classify_refusal(klass: type, name: str) -> bool:
    attr = find_class_attribute(klass, name)[1]
    return not klass.__dictoffset__ and type(attr) is not MemberDescriptorType \
        and not hasattr(type(attr), "__set__")


def _classify_delete(klass: type, name: str) -> int:
    """As _classify_write, but a class's own ``__delattr__`` is what runs."""
    delattr_fn = find_class_attribute(klass, "__delattr__")[1]
    if delattr_fn not in _SAFE_DELATTRS:
        return W_RUN if _code_is_safe(delattr_fn) else W_UNSAFE
    return _classify_write(klass, name)


def _classify_write(klass: type, name: str) -> int:
    if name == "__dict__" or name == "__class__":
        return W_UNSAFE
    setattr_fn = find_class_attribute(klass, "__setattr__")[1]
    if setattr_fn not in _SAFE_SETATTRS:
        return W_RUN if _code_is_safe(setattr_fn) else W_UNSAFE
    owner, attr = find_class_attribute(klass, name)
    if refuses_attribute(klass, name):
        # Python raises AttributeError: where the program wrote it, inside
        # its try, not when the commit publishes a buffered write.
        return W_UNSAFE
    if type(attr) is MemberDescriptorType and "__slots__" not in owner.__dict__:
        # A field of a C type, not a slot of a class statement
        # (defaultdict.default_factory): the C code reads the field itself,
        # so a buffered write would be invisible to it.
        return W_UNSAFE
    if owner is None or type(attr) in (FunctionType, staticmethod, classmethod,
                                       MemberDescriptorType):
        return W_PLAIN
    if type(attr) is property:
        funcs = [f for f in (attr.fset, attr.fdel) if f is not None]
        return W_RUN if all(_code_is_safe(f) for f in funcs) else W_UNSAFE
    if _is_data_descriptor(attr):
        return W_UNSAFE
    return W_PLAIN
