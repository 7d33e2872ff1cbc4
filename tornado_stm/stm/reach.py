"""What plain code run in place can change: its stripes are held while it runs.

An inevitable section (or plain code under W) calls code the engine does
not know: a library function, a ``functools.partial``, a lambda kept by a
library, a method of a library class. That code writes in place, without
barriers. So that an optimistic section which read the old state cannot
commit over the change (a lost update) or see half of it (a torn read),
the stripes of everything the call is handed are locked *before* it runs
and get new versions when the section ends (:func:`txn.hold`):

* a list, dict, set or deque, as an object and, for a dict, key by key;
* the attributes of an object (an instance of any Python class, with a
  dict or slots; a ``SimpleNamespace``), of a class, and the globals of a
  module, name by name, as the attribute barriers version them;
* what those hold in turn (``ChainMap.maps``, a class's list of
  handlers), up to :data:`REACH_BUDGET` values looked at.

A class whose names change kind during the call (library ``setattr``
putting a property where a value was) drops its cached attribute kinds
and holds RESHAPE_STRIPE, as an instrumented reshape does
(:func:`barriers.reshaped_class`). Past the budget, and for a library
module no section versioned yet (its attributes were read plainly), the
call holds RESHAPE_STRIPE, which every section reads at its start: every
overlapping section aborts. Slow, but never wrong.
"""

from __future__ import annotations

import functools
import gc
import weakref
from types import (AsyncGeneratorType, BuiltinFunctionType, CoroutineType, GeneratorType,
                   MappingProxyType, MemberDescriptorType, MethodType, MethodWrapperType,
                   ModuleType, SimpleNamespace)
from typing import Any, Optional

from tornado_stm.stm import attrkinds
from tornado_stm.stm.attrkinds import IMMUTABLE_TYPES
from tornado_stm.stm.registry import VERSIONED_MODULES, has_plain_globals
from tornado_stm.stm.txn import CONTAINER_TYPES, Transaction, direct_write, hold, when_unlocking
from tornado_stm.stm.versions import RESHAPE_STRIPE, stripe_of_key, stripe_of_object

#: Values (container elements, attributes) the walk looks at before it gives
#: up and holds RESHAPE_STRIPE instead.
REACH_BUDGET = 10_000

#: Immutable builtins that may hold mutable values (a tuple of lists, a
#: frozenset of application objects): walked, recorded, never skipped.
HOLDING_IMMUTABLE_TYPES = frozenset({tuple, frozenset})
#: The same, subclasses (a namedtuple, ``class Pair(tuple)``) included.
IMMUTABLE_HOLDERS = (tuple, frozenset)
#: Immutable values that hold nothing.
ATOM_TYPES = IMMUTABLE_TYPES - HOLDING_IMMUTABLE_TYPES
HEAP_TYPE = 1 << 9           # Py_TPFLAGS_HEAPTYPE: a class made by a class statement
#: Objects with a frame of their own, which a rollback cannot restore.
FRAME_TYPES = (GeneratorType, CoroutineType, AsyncGeneratorType)
_MISSING = object()


def held_items(holder: Any) -> Any:
    """What a tuple or frozenset (or an instance of a subclass) holds, as a
    plain tuple or frozenset: a subclass's own ``__iter__`` does not run."""
    if isinstance(holder, tuple):
        return tuple.__getitem__(holder, slice(None))
    return frozenset.copy(holder)
DICT_VIEW_KINDS = (type({}.keys()), type({}.values()), type({}.items()))

# A class's own dict, flags and MRO, read without its metaclass's
# __getattribute__ (which could call back here: a recursion).
_class_dict = type.__dict__["__dict__"].__get__
_class_flags = type.__dict__["__flags__"].__get__
_class_mro = type.__dict__["__mro__"].__get__


class Reach:
    """The shared state a call is handed, found by :func:`reached_state`."""

    __slots__ = ("containers", "owners", "classes", "everything")

    def __init__(self) -> None:
        #: Lists, dicts, sets and deques (a module's globals among them).
        self.containers: list = []
        #: Objects and classes whose attributes the call may set.
        self.owners: list = []
        #: The classes among the owners, with their dicts as they were.
        self.classes: list[tuple[type, dict]] = []
        #: True when the walk cannot tell: hold RESHAPE_STRIPE.
        self.everything = False

    def __bool__(self) -> bool:
        return bool(self.containers or self.owners or self.everything)


def reached_state(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Reach:
    """The shared state ``f(*args, **kwargs)`` can reach from its callable and
    arguments: see the module docstring. Values ``tx`` made are walked (a
    private list may hold a shared dict) but not held."""
    reach = Reach()
    seen: set[int] = set()
    pending = [f, *args, *kwargs.values()]
    budget = REACH_BUDGET
    while pending:
        value = pending.pop()
        kind = type(value)
        if kind in ATOM_TYPES or id(value) in seen:
            continue
        seen.add(id(value))
        size = len(value) if issubclass(kind, (tuple, frozenset, *CONTAINER_TYPES)) else 0
        budget -= 1 + size
        if budget < 0:
            reach.everything = True
            break
        shared = tx is None or id(value) not in tx.private
        # (By type: isinstance() may ask a class's metaclass __getattribute__.)
        if issubclass(kind, CONTAINER_TYPES):
            if shared:
                reach.containers.append(value)
            # Copied first: a thread borrowing this W may be changing it now.
            contents = copy_of(value)
            if contents is None:
                reach.everything = True         # changing too fast to look inside
                continue
            pending += (*contents, *contents.values()) if issubclass(kind, dict) else contents
        elif issubclass(kind, (tuple, frozenset)):      # a namedtuple's attributes are its items
            pending += value
            continue
        elif kind in DICT_VIEW_KINDS or kind is MappingProxyType:
            pending += gc.get_referents(value)  # ACCOUNTS.values(), a read-only view: the dict
            continue
        elif issubclass(kind, weakref.ref):     # (KeyedRef too: a WeakValueDictionary's values)
            referent = value()
            if referent is not None:
                pending.append(referent)
            continue
        elif not _class_flags(kind) & HEAP_TYPE and hasattr(kind, "__next__"):
            # A map, zip, generator or iterator: what it will read and hand on
            # cannot be seen without running it.
            reach.everything = True
            break
        elif kind is functools.partial:
            pending += [value.func, *value.args, *value.keywords.values()]
        elif issubclass(kind, ModuleType):
            if shared:
                _reach_module(reach, value)
            continue                            # its globals are the whole program
        elif issubclass(kind, type):
            if shared and _class_flags(value) & HEAP_TYPE:
                namespace = _class_dict(value)
                reach.owners.append(value)
                reach.classes.append((value, dict(namespace)))
                pending += [v for v in namespace.copy().values() if attrkinds.is_plain_value(v)]
            continue
        elif kind is MethodWrapperType or bound_self(value) is not None:
            pending.append(value.__self__)      # obj.method, Cfg.__setattr__
            continue
        if _has_attributes(value):
            if shared:
                reach.owners.append(value)
            pending += attribute_values(value)
    return reach


def copy_of(container: Any) -> Any:
    """A copy made by the builtin type's C code (a subclass's ``copy`` may run
    Python), or None if it kept changing while copied: a thread borrowing
    this W, or framework code of another loop (an asyncio lock's waiters),
    may be changing it now, and a deque's copy then fails."""
    base = next(base for base in CONTAINER_TYPES if isinstance(container, base))
    for _ in range(3):
        try:
            return base.copy(container)
        except RuntimeError:                    # "deque mutated during iteration"
            continue
    return None


def _reach_module(reach: Reach, module: ModuleType) -> None:
    """A module's globals are a dict: held key by key, as its readers version them.
    A library module no section wrote was read plainly: it becomes versioned,
    and every overlapping section (which may have read it plainly) aborts;
    so for an instrumented module whose functions read some globals plainly."""
    reach.containers.append(module.__dict__)
    if module not in VERSIONED_MODULES:
        reach.everything = True
        VERSIONED_MODULES.add(module)
    elif has_plain_globals(module):
        # Its functions read some globals plainly, with no read-log entry
        # (barriers._rebinding_plain_globals): every overlapping section aborts.
        reach.everything = True


def bound_self(f: Any) -> Any:
    """The object a method is bound to (not a module: those are plain functions), or None."""
    kind = type(f)
    if kind is BuiltinFunctionType or kind is MethodType:
        owner = f.__self__
        if owner is not None and type(owner) is not ModuleType:
            return owner
    return None


def _has_attributes(value: Any) -> bool:
    """An object keeping attributes the barriers version per name: an instance of
    a class statement's class (with a dict or slots), or a SimpleNamespace."""
    kind = type(value)
    return (bool(_class_flags(kind) & HEAP_TYPE) or kind is SimpleNamespace) \
        and not issubclass(kind, FRAME_TYPES)


def attribute_names(obj: Any) -> list[str]:
    """The names of ``obj``'s own attributes: its dict's and its classes' slots."""
    names = list(_own_dict(obj).copy())
    for klass in _class_mro(type(obj)):
        slots = _class_dict(klass).get("__slots__", ())
        names.extend((slots,) if isinstance(slots, str) else slots)
    return [name for name in names if name not in ("__dict__", "__weakref__")]


def attribute_values(obj: Any) -> list:
    """The values of ``obj``'s own attributes, read without running its code
    (no ``__getattr__``, property or ``__getattribute__`` of its class)."""
    values = list(_own_dict(obj).copy().values())
    for klass in _class_mro(type(obj)):
        namespace = _class_dict(klass)
        slots = namespace.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            slot = namespace.get(name)
            if type(slot) is MemberDescriptorType:
                try:
                    values.append(slot.__get__(obj, klass))
                except AttributeError:          # not set
                    pass
    return values


def _own_dict(obj: Any) -> Any:
    if issubclass(type(obj), type):
        return _class_dict(obj)
    try:
        found = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return {}
    return found if isinstance(found, (dict, MappingProxyType)) else {}


def direct_call_reaching(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """``f(*args, **kwargs)`` in place, out of optimistic mode, with the stripes of
    the shared state it reaches (:func:`reached_state`) held."""
    reach = reached_state(tx, f, args, kwargs)
    if not reach:
        return f(*args, **kwargs)
    if reach.everything:
        hold((RESHAPE_STRIPE,))
    return direct_container_call(reach.containers, f, args, kwargs, reach.owners, reach.classes)


def direct_container_call(targets: Any, f: Any, args: tuple, kwargs: dict,
                          owners: Any = (), classes: Any = ()) -> Any:
    """``f(*args, **kwargs)`` that may change ``targets`` (containers) and the
    attributes of ``owners`` in place, with all affected stripes held; the
    ``classes`` among the owners (with their dicts before the call) are
    checked for names that changed kind."""
    stripes, keyed = _stripes_and_keys(targets, owners)

    def mutate() -> Any:
        try:
            return f(*args, **kwargs)
        finally:
            _hold_changes(keyed, classes)
    return direct_write(stripes, mutate)


def hold_handed_back(tx: Transaction, *values: Any) -> None:
    """Library code run in place by an inevitable section got ``values`` from
    application code -- what a callback returned (``lib.count_into(lambda:
    STATS)``), the arguments it filled (``box.append(STATS)``,
    ``holder.target = STATS``), what an application generator yielded -- and
    may change them in place: what they reach is held from now to the
    section's end, with the keys and attributes added (and the classes
    reshaped) meanwhile, checked when the stripes are released (caller
    holds W)."""
    values = tuple(value for value in values if type(value) not in ATOM_TYPES)
    if not values:
        return
    reach = reached_state(tx, None, values, {})
    if not reach:
        return
    if reach.everything:
        hold((RESHAPE_STRIPE,))
    stripes, keyed = _stripes_and_keys(reach.containers, reach.owners)
    hold(stripes)
    classes = reach.classes
    when_unlocking(lambda: _hold_changes(keyed, classes))


def _stripes_and_keys(targets: Any, owners: Any) -> tuple[set[int], list]:
    """The stripes of ``targets`` (containers) and of ``owners``' attributes, and
    for each dict and owner (it, a function giving its keys or attribute
    names, those there now), to find the ones plain code adds."""
    stripes = {stripe_of_object(id(t)) for t in targets}
    keyed = [(d, functools.partial(dict.copy, d), dict.copy(d))
             for d in targets if isinstance(d, dict)]
    keyed += [(obj, functools.partial(attribute_names, obj), attribute_names(obj))
              for obj in owners]
    for owner, _, before in keyed:
        stripes.update(key_stripes(owner, before))
    # Keys told apart by identity: an application key's own __hash__ and
    # __eq__ are not run again to compare them (plain Python would not).
    return stripes, [(owner, names, {id(key) for key in before}, before)
                     for owner, names, before in keyed]


def key_stripes(owner: Any, keys: Any) -> set[int]:
    """The stripes of ``keys`` of ``owner`` (a dict's, an object's attribute
    names); RESHAPE_STRIPE for a key whose ``__hash__`` raises now (an
    application key retired since it went in: which stripe it has cannot be
    told, so every overlapping section aborts)."""
    stripes = set()
    for key in keys:
        try:
            stripes.add(stripe_of_key(id(owner), key))
        except Exception:
            stripes.add(RESHAPE_STRIPE)
    return stripes


def _hold_changes(keyed: list, classes: Any) -> None:
    """After plain code ran: the keys (attributes) it added are held (and later
    versioned) too, and the classes whose names changed kind are reshaped."""
    for owner, names, ids_before, _ in keyed:
        hold(key_stripes(owner, [key for key in names() if id(key) not in ids_before]))
    for klass, before_call in classes:
        _forget_if_reshaped(klass, before_call)


def _forget_if_reshaped(klass: type, before: dict) -> None:
    """After plain code ran on ``klass``: if a name changed kind (a method, a
    descriptor or a special method came, went or was replaced; a name was
    added or removed), its cached kinds go and RESHAPE_STRIPE is held."""
    now = _class_dict(klass)
    for name in before.keys() | now.keys():
        old, new = before.get(name, _MISSING), now.get(name, _MISSING)
        if old is new:
            continue
        if old is _MISSING or new is _MISSING or name.startswith("__") or not (
                attrkinds.is_plain_value(old) and attrkinds.is_plain_value(new)):
            attrkinds.forget(klass)
            hold((RESHAPE_STRIPE,))
            return
