"""The barriers: what instrumented code calls instead of touching the heap.

This module is the hot path of the engine and the contract a C fast path
must implement identically. The instrumenter (``tornado_stm.instrument``)
rewrites application code so that:

=====================  =====================================================
plain Python            instrumented code
=====================  =====================================================
``obj.name``            ``get_attr(tx, obj, "name")``
``obj.name = v``        ``set_attr(tx, obj, "name", v)``
``del obj.name``        ``del_attr(tx, obj, "name")``
``obj[k]``              ``get_item(tx, obj, k)``
``obj[k] = v``          ``set_item(tx, obj, k, v)``
``del obj[k]``          ``del_item(tx, obj, k)``
``g`` (a global)        ``get_global(tx, G, "g")`` with ``G`` the module dict
``g = v`` / ``del g``   ``set_global(tx, G, "g", v)`` / ``del_global(...)``
``f(*a, **k)``          ``call(tx, f, *a, **k)``
``for x in it``         ``for x in iterate(tx, it)``
``x in c``              ``contains(tx, x, c)``
``t op= v``             ``t = augmented(tx, operator.iop, t, v)``
``[...]``, ``{...}``    ``new(tx, [...])`` (the object is private)
=====================  =====================================================

``tx`` is the value of :func:`current` read once at the start of the
function (``None`` outside any section). Every barrier behaves exactly as
the plain operation would (same result, same exception, same side effects
as seen by the application) and in addition:

* ``tx is None`` (instrumented code running outside any section) or
  ``tx.inevitable``: reads are plain; writes happen in place under W with
  the written stripes locked and bumped (``txn.direct_write``), so that
  optimistic sections that read the old values abort.
* otherwise (an optimistic section): objects in ``tx.private`` are used
  directly; reads of shared state are versioned and recorded; writes go
  to the redo log; calls to uninstrumented code follow the policy table
  (``tornado_stm.stm.policy``), making the section inevitable when needed.
  A barrier may raise ``AbortSection`` (a BaseException) to retry the
  section.

A call from instrumented code to an instrumented function skips the
section entry wrapper: nested application calls are plain calls. How a
call to anything else is run (the policy table, shadows of the
containers it reads or writes, becoming inevitable) is
:mod:`tornado_stm.stm.calls`; the builtins that act like barriers
(``getattr``, ``dict.get``...) are :mod:`tornado_stm.stm.specials`. The C
fast path (``_fastpath.c``, installed by :mod:`tornado_stm.stm.fastpath`)
mirrors the barriers of this module.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib.util
import inspect
import operator
import sys
import threading
from collections import Counter, defaultdict, deque
from enum import EnumType
from types import FrameType, FunctionType, GetSetDescriptorType, MethodType, ModuleType
from typing import Any, Iterator, Optional

from tornado_stm.stm import policy
from tornado_stm.stm import attrkinds
from tornado_stm.stm.attrkinds import (CLASS_VALUE, IMMUTABLE, IMMUTABLE_TYPES, MODULE,
                                       NONDATA, NONDATA_CODE, PLAIN, RUN, SUPER, TYPE_ATTR,
                                       W_PLAIN, W_RUN, read_kind, write_kind)
from tornado_stm.stm.calls import (ADVANCING_A_SHARED_ITERATOR, DICT_VIEW_TYPES,
                                   MUTABLE_BUFFER_TYPES, READ_INEVITABLY_TYPES, bound_container,
                                   handed_out_iterator, call_direct, call_optimistic,
                                   ITERATOR_TYPES, checks_by_reading, making_a_class,
                                   pairs_as_read,
                                   has_plain_operators, has_plain_readers, is_shared_instance,
                                   shared_defaultdicts_behind,
                                   is_shared_iterator, read_other_shared, record_nested)
from tornado_stm.stm.reach import (FRAME_TYPES, HOLDING_IMMUTABLE_TYPES,
                                   IMMUTABLE_HOLDERS, direct_call_reaching,
                                   direct_container_call)
from tornado_stm.stm.registry import (INSTRUMENTED_CODES, VERSIONED_MODULES, application_frame,
                                      has_plain_globals,
                                      is_instrumented, reads_plainly)
from tornado_stm.stm.bindings import bound_special
from tornado_stm.stm.section import (ENTRY_CODE, STEPPED_FLAGS, entry_target,
                                     of_another_loop, on_this_loop, without_engine_frames)
from tornado_stm.stm.txn import (BARRIERS_ABOVE, CONTAINER_TYPES, DELETED, AbortSection, CURRENT,
                                 Transaction,
                                 class_attribute_bound, direct_dict_write, direct_write,
                                 forget_finalized, hold,
                                 hold_lookups_in_place,
                                 take_w_for_step)
from tornado_stm.stm.versions import RESHAPE_STRIPE, stripe_of_key, stripe_of_object
from tornado_stm.stm.worldlock import WORLD_LOCK

_BUILTINS = builtins.__dict__

#: Values no barrier needs to see (as the C fast path's is_scalar): a coroutine
#: step's direct-mode operation on them alone does not take W.
_SCALARS = frozenset({int, float, str, bool, type(None), bytes})


def current() -> Optional[Transaction]:
    """The transaction of this thread (``None`` outside sections)."""
    return CURRENT.tx


# -- attributes -------------------------------------------------------------

def get_attr(tx: Optional[Transaction], obj: Any, name: str, *default: Any) -> Any:
    if type(obj) is FrameType:
        if name == "f_back":
            # a frame's caller, as plain Python has it: not a barrier's frame
            return application_frame(obj.f_back)[0]
        if name == "f_locals" and obj.f_code.co_flags & inspect.CO_NEWLOCALS \
                and obj.f_code in INSTRUMENTED_CODES:
            return frame_names(tx, obj.f_locals)
    if name == "__globals__" or name == "__code__":
        if type(obj) is FunctionType and obj.__code__ is ENTRY_CODE:
            obj = entry_target(obj)         # the function's, not its entry wrapper's
        if name == "__code__":
            return getattr(obj, name, *default)
        _globals_handed_out(tx, obj)
    if tx is None or tx.inevitable:
        if tx is not None and read_kind(type(obj), name)[0] == NONDATA:
            return _read_nondata_in_place(obj, name, default)
        return getattr(obj, name, *default)
    kind, owner = read_kind(type(obj), name)
    if id(obj) in tx.private and kind != CLASS_VALUE and kind != SUPER:
        return getattr(obj, name, *default)
    try:
        if kind == PLAIN:
            return tx.read_attr(obj, name)
        if kind == IMMUTABLE or kind == RUN:
            return getattr(obj, name)
        if kind == CLASS_VALUE:
            return tx.read_attr(obj, name, owner)
        if kind == MODULE:
            return _module_attr(tx, obj, name)
        if kind == TYPE_ATTR:
            return tx.read_type_attr(obj, name)
        if kind == SUPER:
            return tx.read_super_attr(obj, name)
        if (kind == NONDATA or kind == NONDATA_CODE) and tx.has_own_attr(obj, name):
            return tx.read_attr(obj, name)
        if kind == NONDATA_CODE:
            # Its __get__ is instrumented or known safe: it runs on the
            # class's descriptor (classes keep theirs: see reshapes_class).
            return class_attribute_bound(owner.__dict__[name], obj, type(obj))
    except AttributeError:
        if default:
            return default[0]
        raise
    if name == "__dict__":
        return instance_dict(tx, obj)
    getter = _property_getter_with_own_handler(type(obj), name)
    if getter is not None:
        return policy.lookup(getter).handler(tx, getter, (obj,), {})
    tx.become_inevitable(f"attribute {policy.qualified_name(type(obj))}.{name}")
    if kind == NONDATA:
        return _read_nondata_in_place(obj, name, default)
    return getattr(obj, name, *default)


def _property_getter_with_own_handler(klass: type, name: str) -> Any:
    """The getter of property ``klass.name`` if the engine has a handler for
    calls of it (``RequestHandler.xsrf_token``: the response's own), else None."""
    attr = attrkinds.find_class_attribute(klass, name)[1]
    if type(attr) is property and attr.fget is not None \
            and policy.lookup(attr.fget).kind == "special":
        return attr.fget
    return None


def _read_nondata_in_place(obj: Any, name: str, default: tuple) -> Any:
    """``obj.name`` through a non-data descriptor the engine cannot see into, run in
    place by an inevitable section: one may store its answer in the instance
    (``functools.cached_property``), so the read is a versioned write of
    ``obj.name``. A section that saw no value there must not commit beside it."""
    return direct_write(_attr_stripes(obj, name), getattr, obj, name, *default)


def instance_dict(tx: Optional[Transaction], obj: Any, read: Any = operator.attrgetter("__dict__")
                  ) -> Any:
    """``obj.__dict__`` (and ``vars(obj)``, with ``read=vars``): the live dict of a
    shared object escapes the barriers (its changes in place are seen by
    ``obj.name`` without a version), so the section becomes inevitable and
    holds RESHAPE_STRIPE."""
    if tx is None:
        take_w_for_step()
    if isinstance(obj, ModuleType):
        versioning_module(tx, obj)          # its dict may be written through
        if has_plain_globals(obj):
            _rebinding_plain_globals(tx, obj, "the namespace")
        return read(obj)
    if isinstance(obj, type) or (tx is not None and id(obj) in tx.private):
        return read(obj)
    if tx is not None:
        tx.become_inevitable(f"the __dict__ of a shared {policy.qualified_name(type(obj))}")
    if WORLD_LOCK.held_by_current_thread():         # (a coroutine step holds it too)
        hold((RESHAPE_STRIPE,))
    return read(obj)


def _module_attr(tx: Transaction, module: ModuleType, name: str) -> Any:
    if module not in VERSIONED_MODULES:
        return getattr(module, name)      # a library module no section writes
    if name in _MODULE_TYPE_DATA or _module_class_answers(type(module), name):
        return getattr(module, name)      # mod.__class__, a property: the type's, first
    namespace = module.__dict__
    try:
        return tx.read_dict_item(namespace, name)
    except KeyError:
        pass
    # Not there, as this section sees the module (its own ``del mod.x`` included):
    # what the module's type has (mod.__repr__, mod.__setattr__), then the
    # module's __getattr__, as in Python, or the proper AttributeError.
    if hasattr(type(module), name):
        return getattr(module, name)
    try:
        fallback = tx.read_dict_item(namespace, "__getattr__")
    except KeyError:
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None
    # (through the call barrier: __getattr__ = VALUES.get reads a shared dict)
    return call(tx, fallback, name)


#: Attributes of a function that change how a call runs: set on an entry
#: wrapper, they go to the function it calls too.
_CALL_SHAPING = frozenset({"__defaults__", "__kwdefaults__", "__code__"})


def _module_class_answers(kind: type, name: str, writing: bool = False) -> bool:
    """True when a module's own class (``sys.modules[__name__].__class__ = C``)
    has a data descriptor for ``name`` (a property), or, ``writing``, a
    ``__setattr__`` of its own: Python goes to it, not to the namespace. Its
    code is the application's (instrumented) or the library's: it runs as it is."""
    if kind is ModuleType:
        return False
    for klass in kind.__mro__:
        if klass is ModuleType:
            return writing and kind.__setattr__ is not ModuleType.__setattr__
        if name in vars(klass):
            return hasattr(type(vars(klass)[name]), "__set__")
    return False


#: Names a module's type answers before the module's namespace (its data
#: descriptors: ``__class__``, ``__dict__``, ``__annotations__``).
_MODULE_TYPE_DATA = frozenset(
    name for klass in ModuleType.__mro__ for name, value in vars(klass).items()
    if hasattr(type(value), "__set__") and name != "__dict__")


def imported_name(tx: Optional[Transaction], plain: Any, module: str, level: int,
                  name: str, package: Optional[str]) -> Any:
    """``from module import name`` in a function: the value as the section sees it.

    Python's import reads the module's attribute plainly: no read-log entry
    (a concurrent rebinding of ``module.name`` went unnoticed, and updates
    were lost) and not the section's own ``module.name = v``. The statement
    still runs (it loads the module and binds the name); the name is then
    read again through the attribute barrier. A name the module does not
    have as an attribute (a submodule the import system bound) keeps the
    imported value.
    """
    if tx is None and CURRENT.step is not None:
        # A step without W yet: the import read the module before W; read it again under W.
        take_w_for_step()
    elif tx is None or tx.inevitable:
        return plain
    try:
        resolved = importlib.util.resolve_name("." * level + module, package) if level else module
    except (ImportError, ValueError):
        return plain
    source = sys.modules.get(resolved)
    if not isinstance(source, ModuleType):
        return plain
    try:
        return get_attr(tx, source, name)
    except AttributeError:
        return plain


def _globals_handed_out(tx: Optional[Transaction], function: Any) -> None:
    """``f.__globals__`` is its module's dict: writes through it must be versioned
    like ``vars(module)``'s (versioning_module)."""
    if not isinstance(function, FunctionType):
        return
    module = sys.modules.get(getattr(function, "__module__", None) or "")
    if isinstance(module, ModuleType) and module.__dict__ is function.__globals__:
        versioning_module(tx, module)
        if has_plain_globals(module):
            _rebinding_plain_globals(tx, module, "the namespace")


def versioning_module(tx: Optional[Transaction], module: ModuleType) -> None:
    """Before instrumented code first writes a library module (``json.x = ...``,
    ``vars(json)``): from now on its attributes are read through the read log.

    Sections running now may have read it plainly (``_module_attr``): this
    one becomes inevitable and adds the module to the set while holding
    RESHAPE_STRIPE, which every section reads at its start, so every
    overlapping section aborts, as for a class switch. A rare event: the
    set only grows.
    """
    if module in VERSIONED_MODULES:
        return
    if tx is not None:
        tx.become_inevitable(f"the first write to module {module.__name__}")
    direct_write((RESHAPE_STRIPE,), VERSIONED_MODULES.add, module)


def _rebinding_plain_globals(tx: Optional[Transaction], module: ModuleType, what: str) -> None:
    """Before a write to globals that the module's own functions read plainly
    (``setattr(sys.modules[__name__], "hits", n)``, ``config.LIMIT = 5`` from
    another module, through ``vars(module)``): their reads left no entry in
    any read log, so the section becomes inevitable and holds
    RESHAPE_STRIPE, which every section reads at its start: every
    overlapping section aborts, and runs again after this one."""
    if tx is not None:
        tx.become_inevitable(f"rebinding {what} of module {module.__name__}, read plainly")
    direct_write((RESHAPE_STRIPE,), _no_op)


def _no_op() -> None:
    return None


def set_attr(tx: Optional[Transaction], obj: Any, name: str, value: Any,
             through_the_class: bool = True) -> None:
    """``obj.name = value``. ``through_the_class=False``: the module's own slot
    (``object.__setattr__(mod, ...)`` in a module class's ``__setattr__``)."""
    if isinstance(obj, type):
        value = bound_special(name, value)  # Cls.__len__ = TABLE.__len__ (bindings)
    if name in _CALL_SHAPING and type(obj) is FunctionType and obj.__code__ is ENTRY_CODE:
        # f.__defaults__ = (10,): the function the entry wrapper calls uses its own.
        setattr(entry_target(obj), name, value)
        if name == "__code__":
            return                          # (the wrapper keeps its own: it is the entry)
    if through_the_class and isinstance(obj, ModuleType) \
            and _module_class_answers(type(obj), name, writing=True):
        setattr(obj, name, value)           # a property (or __setattr__) of a module's class
        return
    if isinstance(obj, ModuleType):
        versioning_module(tx, obj)
        if reads_plainly(obj, name):
            _rebinding_plain_globals(tx, obj, repr(name))
    elif reshaped_class(tx, obj, name, setattr, value):
        return
    if tx is not None and not tx.inevitable:
        if id(obj) in tx.private:
            setattr(obj, name, value)
            return
        if isinstance(obj, ModuleType):
            tx.write_dict_item(obj.__dict__, name, value)
            return
        kind = write_kind(type(obj), name)
        if kind == W_PLAIN:
            tx.write_attr(obj, name, value)
            return
        if kind == W_RUN:
            setattr(obj, name, value)
            return
        tx.become_inevitable(f"setting {policy.qualified_name(type(obj))}.{name}")
    if tx is not None and id(obj) in tx.private:
        setattr(obj, name, value)
    elif isinstance(obj, ModuleType):
        direct_dict_write(obj.__dict__, name, operator.setitem, value)
    else:
        direct_write(_attr_stripes(obj, name), setattr, obj, name, value)


def reshaped_class(tx: Optional[Transaction], obj: Any, name: str, op: Any, *value: Any
                   ) -> bool:
    """If ``op(obj, name, *value)`` (a set, or with no value a delete) changes what
    kind of thing a class holds under ``name`` (a method replaced, a special
    method set, a new name: ``attrkinds.reshapes_class``), make it, dropping
    the cached attribute kinds, and return True; otherwise False.

    In place, by an inevitable section holding RESHAPE_STRIPE, which every
    section reads at its start: each overlapping section, which may have
    read ``name`` under the old kinds, aborts (as for a ``__class__``
    switch). A class the section created is still its own: in place, plainly.
    """
    if not isinstance(obj, type) or not attrkinds.reshapes_class(
            obj, name, value[0] if value else DELETED):
        return False

    def reshape() -> None:
        attrkinds.forget(obj)
        op(obj, name, *value)
        # Again after: a kind another thread worked out from the class as it
        # was, in between, would outlive the change (its section aborts on
        # RESHAPE_STRIPE, but its retry would find the stale kind cached).
        attrkinds.forget(obj)
        if name == "__del__":
            forget_finalized()

    if tx is not None and id(obj) in tx.private:
        reshape()
        return True
    if tx is not None:
        tx.become_inevitable(f"changing the kind of {policy.qualified_name(obj)}.{name}")
    direct_write((stripe_of_key(id(obj), name), RESHAPE_STRIPE), reshape)
    return True


_OBJECT_GETATTRIBUTE = object.__getattribute__


class PendingMethod:
    """``obj.name`` about to be called, looked up when the step takes W (see
    :func:`method_to_call`).

    Only the call barrier ever sees one: the instrumenter passes what
    :func:`method_to_call` returns straight to ``call``.
    """

    __slots__ = ("obj", "name", "found", "error")

    def __init__(self, obj: Any, name: str) -> None:
        self.obj = obj
        self.name = name
        self.found: Any = PendingMethod        # (not looked up yet)
        self.error: Optional[BaseException] = None

    def look_up(self) -> None:
        """Called by ``section.LazyW`` once the step holds W."""
        try:
            self.found = get_attr(None, self.obj, self.name)
        except Exception as error:      # the method went meanwhile
            # (without the traceback, whose frame would hold this object:
            # section.LazyW counts the references to tell a call to come)
            self.error = error.with_traceback(None)

    def resolve(self) -> Any:
        """The bound method, as the step found it when it took W."""
        if self.found is PendingMethod and self.error is None:
            self.look_up()              # (the call itself took W: looked up now)
        if self.error is not None:
            raise self.error
        return self.found


def method_to_call(tx: Optional[Transaction], obj: Any, name: str) -> Any:
    """``obj.name`` in ``obj.name(args)`` in an ``async def`` body whose
    arguments do not await: ``get_attr``, except in a coroutine step that
    has not yet taken W (``section._step``).

    There, looking the method up would take W before the arguments are
    computed: ``self.write(render(rows))`` after an ``await`` would render
    under W, one coroutine at a time. When the lookup is a plain one -- a
    Python function found on the class, no ``__getattribute__`` of the
    class's own, no value of that name in the instance dict -- it has no
    effect and, unless another thread deletes the method meanwhile, cannot
    fail, so it may as well be made at the call, once the arguments are known. It is made when the step takes W (``section.LazyW``),
    by the call barrier or by an argument's first access to shared state,
    whichever comes first: until then the step touched nothing shared, so
    the lookup reads the class as a serial run that starts the step there
    would, and what the arguments do after (rebinding the method) comes
    after the lookup, as in plain Python.
    """
    if tx is None:
        take_w = CURRENT.step
        if take_w is not None and _looked_up_plainly(obj, name):
            pending = PendingMethod(obj, name)
            take_w.lookups.append(pending)
            return pending
    return get_attr(tx, obj, name)


def _looked_up_plainly(obj: Any, name: str) -> bool:
    """True when ``obj.name`` is a Python function of ``obj``'s class, reached
    by ``object.__getattribute__`` without running code or failing."""
    klass = type(obj)
    if read_kind(klass, name)[0] != PLAIN \
            or attrkinds.find_class_attribute(klass, "__getattribute__")[1] is not _OBJECT_GETATTRIBUTE:
        return False
    if type(attrkinds.find_class_attribute(klass, name)[1]) is not FunctionType:
        return False
    if not klass.__dictoffset__:
        return True
    if type(attrkinds.find_class_attribute(klass, "__dict__")[1]) is not GetSetDescriptorType:
        return False
    own = _OBJECT_GETATTRIBUTE(obj, "__dict__")
    return name not in own


def _attr_stripes(obj: Any, name: str) -> tuple[int, ...]:
    """The stripes an in-place write of ``obj.name`` holds."""
    if name in ("__class__", "__dict__"):
        return (stripe_of_key(id(obj), name), RESHAPE_STRIPE)
    return (stripe_of_key(id(obj), name),)


def del_attr(tx: Optional[Transaction], obj: Any, name: str) -> None:
    if isinstance(obj, ModuleType):
        versioning_module(tx, obj)
        if reads_plainly(obj, name):
            _rebinding_plain_globals(tx, obj, repr(name))
    elif reshaped_class(tx, obj, name, delattr):
        return
    if tx is not None and not tx.inevitable:
        if id(obj) in tx.private:
            delattr(obj, name)
            return
        if isinstance(obj, ModuleType):
            try:
                tx.delete_dict_item(obj.__dict__, name)
            except KeyError:
                raise AttributeError(f"module {obj.__name__!r} has no attribute {name!r}") from None
            return
        kind = write_kind(type(obj), name, deleting=True)
        if kind == W_PLAIN:
            tx.delete_attr(obj, name)
            return
        if kind == W_RUN:
            delattr(obj, name)
            return
        tx.become_inevitable(f"deleting {policy.qualified_name(type(obj))}.{name}")
    if tx is not None and id(obj) in tx.private:
        delattr(obj, name)
    elif isinstance(obj, ModuleType):
        # A module's attributes are read as items of its dict: their stripes
        # (delattr, for its AttributeError and a module's __delattr__).
        direct_dict_write(obj.__dict__, name, lambda _values, key: delattr(obj, key))
    else:
        direct_write(_attr_stripes(obj, name), delattr, obj, name)


# -- subscripts ---------------------------------------------------------------

def get_item(tx: Optional[Transaction], obj: Any, key: Any) -> Any:
    if tx is None or tx.inevitable:
        if type(obj) is not dict and isinstance(obj, dict) and _inserts_if_missing(tx, obj, key):
            # counts[k] of a shared defaultdict inserts k in place: a write,
            # held and versioned as one (an optimistic section's copy of the
            # dict, made before, would drop the key at its commit).
            return direct_write((stripe_of_key(id(obj), key), stripe_of_object(id(obj))),
                                operator.getitem, obj, key)
        return obj[key]
    kind = type(obj)
    if kind in IMMUTABLE_TYPES or id(obj) in tx.private:
        return obj[key]
    if kind is dict:
        return tx.read_dict_item(obj, key)
    if kind is list:
        return tx.whole_read(obj, operator.getitem, key)
    if isinstance(obj, dict):
        return tx.read_dict_item(obj, key)
    if isinstance(obj, (list, deque)):
        return tx.whole_read(obj, operator.getitem, key)
    obj = read_other_shared(tx, obj)
    _judge_method(tx, kind, "__getitem__")
    return obj[key]


def _inserts_if_missing(tx: Optional[Transaction], d: dict, key: Any) -> bool:
    """True if ``d[key]``, read in place, would insert ``key``: a shared dict
    whose class has a ``__missing__`` (a ``defaultdict``'s, one of the
    application's; not ``Counter``'s, which inserts nothing) and no ``key``."""
    if tx is not None and id(d) in tx.private:
        return False
    missing = next((klass.__dict__["__missing__"] for klass in type(d).__mro__
                    if "__missing__" in klass.__dict__), None)
    return missing is not None and missing is not Counter.__missing__ \
        and not dict.__contains__(d, key)


def set_item(tx: Optional[Transaction], obj: Any, key: Any, value: Any) -> None:
    if tx is not None and not tx.inevitable:
        if id(obj) in tx.private:
            obj[key] = value
        elif isinstance(obj, dict):
            tx.write_dict_item(obj, key, value)
        elif isinstance(obj, list):
            # lst[a:b] = src reads src now; lst[i] = v only stores a reference.
            tx.shadow_for_write(obj)[key] = view(tx, value) if type(key) is slice else value
        elif isinstance(obj, deque):
            tx.shadow_for_write(obj)[key] = value
        elif type(obj) in IMMUTABLE_TYPES:
            obj[key] = value                  # raises the usual TypeError
        else:
            _judge_method(tx, type(obj), "__setitem__")
            _direct_item_op(tx, obj, key, operator.setitem, value)
        return
    _direct_item_op(tx, obj, key, operator.setitem, value)


def del_item(tx: Optional[Transaction], obj: Any, key: Any) -> None:
    if tx is not None and not tx.inevitable:
        if id(obj) in tx.private:
            del obj[key]
        elif isinstance(obj, dict):
            tx.delete_dict_item(obj, key)
        elif isinstance(obj, (list, deque)):
            del tx.shadow_for_write(obj)[key]
        elif type(obj) in IMMUTABLE_TYPES:
            del obj[key]                      # raises the usual TypeError
        else:
            _judge_method(tx, type(obj), "__delitem__")
            _direct_item_op(tx, obj, key, operator.delitem)
        return
    _direct_item_op(tx, obj, key, operator.delitem)


def _judge_method(tx: Transaction, kind: type, name: str) -> None:
    """Before running ``kind.name`` (a special method): inevitable unless it is safe.

    Instrumented methods are safe; uninstrumented ones only when they read
    (``__getitem__``/``__contains__`` with a ``pure`` policy entry).
    """
    for klass in kind.__mro__:
        method = klass.__dict__.get(name)
        if isinstance(method, staticmethod):       # (bindings.special_method's wrapper)
            method = method.__func__
        if method is not None:
            if is_instrumented(method):
                return
            if name in ("__getitem__", "__contains__") and policy.lookup(method).kind == "pure":
                return
            break
    tx.become_inevitable(f"{policy.qualified_name(kind)}.{name}")


def _direct_item_op(tx: Optional[Transaction], obj: Any, key: Any, op: Any, *value: Any) -> None:
    if tx is not None and id(obj) in tx.private:
        op(obj, key, *value)
    elif isinstance(obj, dict):
        direct_dict_write(obj, key, op, *value)
    elif isinstance(obj, (list, set, deque)):
        direct_write((stripe_of_object(id(obj)),), op, obj, key, *value)
    else:
        direct_call_reaching(tx, op, (obj, key, *value), {})     # UserDict: its .data


# -- globals ------------------------------------------------------------------

def get_global(tx: Optional[Transaction], namespace: dict, name: str) -> Any:
    try:
        if tx is None or tx.inevitable:
            return namespace[name]
        return tx.read_dict_item(namespace, name)
    except KeyError:
        try:
            return _BUILTINS[name]
        except KeyError:
            raise NameError(f"name {name!r} is not defined", name=name) from None


def set_global(tx: Optional[Transaction], namespace: dict, name: str, value: Any) -> None:
    if tx is None:
        take_w_for_step()
    if tx is None or tx.inevitable:
        direct_dict_write(namespace, name, operator.setitem, value)
    else:
        tx.write_dict_item(namespace, name, value)


def named_value(tx: Optional[Transaction], holder: Any, name: str, value: Any) -> Any:
    """``(name := value)`` for a barriered name, which returns ``value``.

    ``holder`` is the module's globals dict for a global, or the ``Box``
    of a nonlocal (``name`` is then "value").
    """
    if type(holder) is dict:
        set_global(tx, holder, name, value)
    else:
        set_attr(tx, holder, name, value)
    return value


class binding_globals:
    """``with binding_globals(tx, namespace, *names):`` around a statement of a
    function that binds globals itself (``def``, ``class`` or ``import`` under
    a ``global`` declaration), which Python stores without a barrier.

    The section becomes inevitable and the names' stripes are held until it
    ends, so no optimistic section reads the new value, or the old one, and
    commits; outside a section the statement runs under W.
    """

    def __init__(self, tx: Optional[Transaction], namespace: dict, *names: str) -> None:
        self.tx = tx
        self.stripes = {stripe for name in names
                        for stripe in (stripe_of_key(id(namespace), name),
                                       stripe_of_object(id(namespace)))}
        self.own_world_lock = False

    def __enter__(self) -> None:
        if self.tx is not None:
            self.tx.become_inevitable("binding a global with def, class or import")
            hold(self.stripes)
            return
        take_w_for_step()
        if not WORLD_LOCK.held_by_current_thread():
            WORLD_LOCK.acquire()
            self.own_world_lock = True
        hold(self.stripes)

    def __exit__(self, *exc: Any) -> bool:
        if self.own_world_lock:
            WORLD_LOCK.release()
        return False


def del_global(tx: Optional[Transaction], namespace: dict, name: str) -> None:
    if tx is None:
        take_w_for_step()
    try:
        if tx is None or tx.inevitable:
            direct_dict_write(namespace, name, operator.delitem)
        else:
            tx.delete_dict_item(namespace, name)
    except KeyError:
        raise NameError(f"name {name!r} is not defined", name=name) from None


# -- iteration, membership, augmented assignment, fresh objects ------------------

def iterate(tx: Optional[Transaction], obj: Any) -> Any:
    """What a ``for`` loop (or a comprehension) should iterate over.

    A shared container is iterated through the section's read shadow: one
    consistent copy, which the section's own later writes also change, so
    a lazy consumer (a generator expression) sees exactly what a serial
    run would. An iterator or generator the section did not make is
    consumed in place, which no abort could undo: the section becomes
    inevitable first.
    """
    if tx is None or tx.inevitable or id(obj) in tx.private:
        return obj
    if isinstance(obj, CONTAINER_TYPES):
        return tx.read_shadow(obj)
    return _read_in_place(tx, obj)


def _read_in_place(tx: Transaction, obj: Any) -> Any:
    """What plain code reads for ``obj``, neither a container nor the section's own:
    an iterator or generator another section made is consumed in place, which
    no abort could undo, so the section becomes inevitable first."""
    if is_shared_iterator(obj):
        tx.become_inevitable(ADVANCING_A_SHARED_ITERATOR)
    elif type(obj) not in IMMUTABLE_TYPES and hasattr(type(obj), "__iter__") \
            and not isinstance(obj, (*READ_INEVITABLY_TYPES, *DICT_VIEW_TYPES)):
        # An iterable of the application's: what its __iter__ hands back.
        method = type(obj).__iter__
        if type(method) is FunctionType and not is_instrumented(method):
            # Library Python (a UserDict or ChainMap subclass) reads the live
            # object as the loop goes, lazily (a break, a worklist that
            # grows): in place, inevitably.
            tx.become_inevitable(f"iterating a shared {policy.qualified_name(type(obj))}")
            return iter(obj)
        return handed_out_iterator(tx, obj, iter(obj))
    return read_other_shared(tx, obj)


def contains(tx: Optional[Transaction], item: Any, container: Any) -> bool:
    if tx is None or tx.inevitable:
        return item in container
    if isinstance(container, (tuple, list, deque)) and _compares_nested(item):
        # [1, 2] in rows compares the values nested in the items, as == does
        # (a set only compares hashable items; a tuple of atoms reads nothing nested)
        return item in deep_view(tx, container)
    kind = type(container)
    if getattr(kind, "__contains__", None) is None and _compares_nested(item):
        # An iterator, or an application iterable without __contains__ (made
        # by this section or not): C compares the needle with each item its
        # __iter__ (or __getitem__) hands out, the contents of both, where
        # no barrier stands.
        tx.become_inevitable("'in' compares with the items of an iterable")
        return item in container
    if kind in IMMUTABLE_TYPES or id(container) in tx.private:
        return item in container
    if isinstance(container, dict):
        return tx.dict_contains(container, item)
    if isinstance(container, (list, set, deque)):
        return tx.whole_read(container, operator.contains, item)
    container = read_other_shared(tx, container)
    _judge_method(tx, kind, "__contains__")
    return item in container


def _compares_nested(item: Any) -> bool:
    """True when comparing ``item`` with other values can read containers nested in them."""
    kind = type(item)
    if kind in HOLDING_IMMUTABLE_TYPES:
        return not all(type(element) in IMMUTABLE_TYPES and (
            type(element) not in HOLDING_IMMUTABLE_TYPES or not _compares_nested(element))
            for element in item)
    return kind not in IMMUTABLE_TYPES


# -- values read by uninstrumented code: operators, tests, formatting, unpacking ----

def view(tx: Optional[Transaction], obj: Any) -> Any:
    """``obj`` as an unpacking or a starred argument reads it right now.

    The rewriter wraps unpacked and starred values. A shared container
    the section wrote is replaced by its private copy (identity never
    matters in those places); one it did not write is returned itself, its
    read recorded (and checked again at commit). A bound method of a shared
    container is re-bound to the section's copy. An iterable of the
    application's is replaced by what its ``__iter__`` hands back, which
    the unpacking then consumes (an iterator it shares with other
    sections makes this one inevitable).
    """
    return _viewed(tx, obj, unpacked=True)


def operand(tx: Optional[Transaction], obj: Any) -> Any:
    """``obj`` as an operator (``-x``, ``x + 1``, ``x += y``'s value) or a
    ``**`` mapping reads it right now: :func:`view`'s reading, the object
    itself kept (its own ``__add__`` or ``keys()`` runs on it)."""
    return _viewed(tx, obj, unpacked=False)


def _viewed(tx: Optional[Transaction], obj: Any, unpacked: bool) -> Any:
    if tx is None or tx.inevitable:
        return _looked_up_in_place(tx, obj)
    kind = type(obj)
    if kind in IMMUTABLE_TYPES or id(obj) in tx.private:
        return obj
    if kind is defaultdict:
        # "%(k)s" % counts: C looks keys up, and inserts a missing one
        copy_given = tx.copy_for_lookups(obj)
        if copy_given is not None:
            return copy_given
        tx.become_inevitable("a defaultdict's factory run by plain code")
        return _looked_up_in_place(tx, obj)
    if isinstance(obj, CONTAINER_TYPES):
        log = tx.containers.get(id(obj))
        if log is not None:
            return tx.materialize(log)
        tx.touch(obj)
        return obj
    owner = bound_container(obj)
    if owner is not None and id(owner) not in tx.private:
        return getattr(tx.read_shadow(owner), obj.__name__)
    if unpacked:
        return _read_in_place(tx, obj)   # an iterator unpacked or starred: ``[*it]``, ``f(*it)``
    if shared_defaultdicts_behind(tx, obj):
        # "%(k)s" % ChainMap({}, counts): its library __getitem__ inserts
        # a missing key into the live defaultdict.
        tx.become_inevitable(f"a defaultdict's factory run through a {policy.qualified_name(kind)}")
        return _looked_up_in_place(tx, obj)
    if is_shared_instance(tx, obj) and has_plain_operators(kind) \
            and not record_nested(tx, (obj,), instances=True):
        # UL + [x] of a UserList: library code reads UL.data past the barriers,
        # and would miss what the section wrote there.
        tx.become_inevitable(f"an operator of a shared {policy.qualified_name(kind)} it wrote")
    return read_other_shared(tx, obj)


def _looked_up_in_place(tx: Optional[Transaction], obj: Any) -> Any:
    """``obj`` read in place by plain code (an inevitable section's): a shared
    defaultdict's missing keys it looks up (directly, or through a library
    mapping holding it) are inserted, held as its writes."""
    if tx is not None and WORLD_LOCK.held_by_current_thread():
        if type(obj) is defaultdict:
            if id(obj) not in tx.private:
                hold_lookups_in_place(obj)
        elif type(obj) not in IMMUTABLE_TYPES and not issubclass(type(obj), CONTAINER_TYPES):
            for counts in shared_defaultdicts_behind(tx, obj):
                hold_lookups_in_place(counts)
    return obj


def pairs_operand(tx: Optional[Transaction], obj: Any) -> Any:
    """The argument of ``mine.update(x)`` (a dict or set the call made): read
    as an operand, and a list of shared pairs as the section reads each pair
    (``calls.pairs_as_read``)."""
    if tx is None or tx.inevitable:
        return obj
    if not (isinstance(obj, ITERATOR_TYPES) and id(obj) in tx.private):
        obj = operand(tx, obj)
    return pairs_as_read(tx, obj)


def deep_view(tx: Optional[Transaction], obj: Any) -> Any:
    """``obj`` as a comparison or a format reads it: :func:`view`, nested containers too.

    ``==``, ``<``, ``repr``, f-strings, ``sorted`` and ``max`` read the
    containers nested in a value as well (a list of lists). Their reads
    are recorded; if the section wrote one of them (the nested read would
    miss that write), or the value is too large to scan, the section
    becomes inevitable, so the read sees exactly what a serial run would.
    """
    if tx is None or tx.inevitable:
        return _looked_up_in_place(tx, obj)
    kind = type(obj)
    if kind in IMMUTABLE_TYPES and kind not in HOLDING_IMMUTABLE_TYPES:
        return obj
    if id(obj) in tx.private:
        # list(rows) == other: a container the section made may hold shared
        # ones (and f"{error}" formats an exception's arguments)
        if isinstance(obj, (*CONTAINER_TYPES, BaseException)) and not record_nested(tx, obj):
            tx.become_inevitable("deep read of a shared structure outside the barriers")
        return obj
    result = obj if kind in HOLDING_IMMUTABLE_TYPES else operand(tx, obj)
    if tx.inevitable:
        return result       # the operand's reading made it so: plain code reads in place
    if has_plain_readers(kind) and is_shared_instance(tx, obj) or isinstance(obj, BaseException):
        # p == q of dataclasses: generated code reads p's attributes (a
        # namedtuple's __repr__ its items, an exception's str() its arguments)
        nested = (obj,)
    elif isinstance(result, (*IMMUTABLE_HOLDERS, *CONTAINER_TYPES)):
        nested = result
    else:
        return result
    if not record_nested(tx, nested):
        tx.become_inevitable("deep read of a shared structure outside the barriers")
        return obj
    return result


def match_subject(tx: Optional[Transaction], obj: Any) -> Any:
    """The subject of a ``match`` with class patterns (``case Point(x=0)``).

    Class patterns read attributes (of the subject or of objects nested in
    it) with plain ``getattr``, which would miss the section's own buffered
    writes: the section becomes inevitable first unless the subject is an
    immutable atom (a number, a string).
    """
    if tx is None and type(obj) not in _SCALARS:
        take_w_for_step()
    if tx is not None and not tx.inevitable and (
            type(obj) not in IMMUTABLE_TYPES or type(obj) in HOLDING_IMMUTABLE_TYPES):
        tx.become_inevitable("match with class patterns on a shared object")
    return obj


def match_patterns(tx: Optional[Transaction], subject: Any, named: Any) -> Any:
    """The subject of a ``match`` whose patterns name classes or dotted values.

    CPython matches them past the barriers: a class pattern calls the
    class's ``__instancecheck__`` in C (a ``runtime_checkable`` Protocol
    reads the subject's attributes; an ABC's application
    ``__subclasshook__`` reads shared state and is cached), and a value
    pattern ``case CFG.mode`` reads the attribute plainly (missing the
    section's own write, recording no read). ``named()`` gives those
    classes and the objects the value patterns read; unless every class
    answers by type and every such object is an ``Enum`` class (members
    never change), an optimistic section becomes inevitable first.
    """
    if tx is None or tx.inevitable:
        return subject
    try:
        classes, owners = named()
    except Exception:                       # the case that names it raises, as it would
        classes, owners = (), (None,)
    if any(map(checks_by_reading, classes)) or not all(isinstance(o, EnumType) for o in owners):
        tx.become_inevitable("match patterns read past the barriers")
    return subject


def truth(tx: Optional[Transaction], obj: Any) -> bool:
    """``bool(obj)`` in ``if``, ``while``, ``not``, ``assert``, comprehension tests."""
    if tx is None or tx.inevitable or type(obj) in IMMUTABLE_TYPES or id(obj) in tx.private:
        return bool(obj)
    if isinstance(obj, CONTAINER_TYPES):
        return tx.whole_read(obj, bool)
    return bool(operand(tx, obj))          # (not UL: UserList.__len__ reads UL.data)


def compared(tx: Optional[Transaction], result: Any) -> Any:
    """What an application's ``__eq__``, ``__lt__``..., ``__contains__`` or ``__exit__`` returns.

    The interpreter and C code test such a result themselves, where no
    barrier of the caller stands: the middle of a chained comparison
    (``a < b < c``), a ``match`` value pattern, ``x in seq``,
    ``list.count``, ``sorted``, the ``in`` operator, a ``with`` deciding
    whether to swallow an exception. A shared container (or any value whose
    truth library code reads: a ``UserList``) would have its truth read in
    place: the section becomes inevitable first, so that read is a serial
    run's. A bool, ``NotImplemented``, anything the section made, or an
    object whose truth is instrumented code is returned as it is.
    """
    if tx is None or tx.inevitable or type(result) in IMMUTABLE_TYPES \
            or result is NotImplemented or id(result) in tx.private:
        return result
    if isinstance(result, (*CONTAINER_TYPES, bytearray)) or _truth_read_unseen(type(result)):
        tx.become_inevitable("a comparison or test method returned a shared value")
    return result


def _truth_read_unseen(kind: type) -> bool:
    """True if ``bool()`` of a ``kind`` runs code the barriers do not see
    (its ``__bool__`` or ``__len__`` is not instrumented: C or library code)."""
    for name in ("__bool__", "__len__"):
        method = getattr(kind, name, None)
        if method is not None:
            return not is_instrumented(method)
    return False


def touch(tx: Optional[Transaction], obj: Any) -> Any:
    """An operand of ``or``/``and`` whose value is kept: recorded, returned as itself.

    If the section wrote the container, plain ``bool()`` would see the
    committed contents: the section becomes inevitable (its writes are
    then public) so the test and the value agree with a serial run.
    """
    if tx is None or tx.inevitable or type(obj) in IMMUTABLE_TYPES or id(obj) in tx.private:
        return obj
    if isinstance(obj, CONTAINER_TYPES):
        log = tx.containers.get(id(obj))
        if log is not None and log.changed():
            tx.become_inevitable("testing a container this section wrote, in 'and'/'or'")
        else:
            tx.touch(obj)
        return obj
    return read_other_shared(tx, obj)


#: The operators of binary(), by index (the rewriter and _fastpath.c use the same order).
BINARY_OPERATORS = (operator.add, operator.sub, operator.mul, operator.truediv,
                    operator.floordiv, operator.mod, operator.pow, operator.lshift,
                    operator.rshift, operator.or_, operator.xor, operator.and_, operator.matmul)
#: The comparisons of compare(), by index (same order in the rewriter and _fastpath.c).
COMPARE_OPERATORS = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                     operator.ge)


def binary(tx: Optional[Transaction], op: int, left: Any, right: Any) -> Any:
    """``left OP right`` with both operands read through :func:`operand`: one
    barrier call where the rewriter would otherwise emit two."""
    return BINARY_OPERATORS[op](operand(tx, left), operand(tx, right))


def compare(tx: Optional[Transaction], op: int, left: Any, right: Any) -> Any:
    """``left OP right`` (``==``, ``<``...) with both operands read through
    :func:`deep_view`: one barrier call where the rewriter would emit two."""
    return COMPARE_OPERATORS[op](deep_view(tx, left), deep_view(tx, right))


def compare_test(tx: Optional[Transaction], op: int, left: Any, right: Any) -> bool:
    """``if left OP right:`` (or ``while``): :func:`truth` of :func:`compare`, in one call."""
    return truth(tx, compare(tx, op, left, right))


def class_bases(tx: Optional[Transaction], bases: Any) -> Any:
    """The bases of a class statement in a function (or of ``type(name, bases,
    ns)`` written so): see :func:`calls.making_a_class`."""
    making_a_class(tx, bases)
    return bases


def stores_in_place(tx: Optional[Transaction], iterable: Any) -> Any:
    """The iterable of a comprehension whose target stores into an attribute or
    an item (``[0 for CFG.cur in xs]``): stored in place, without a barrier.
    A rare idiom, run inevitably, every overlapping section aborting
    (RESHAPE_STRIPE is held): slow, but serial."""
    _in_place_alone(tx, "a comprehension storing into an attribute or an item")
    return iterable


def code_run_plainly(tx: Optional[Transaction], source: Any) -> Any:
    """The code ``eval`` or ``exec`` runs (``exec("HITS += 1", globals())``):
    plain code, reading and writing the namespaces in place. As
    :func:`stores_in_place`: inevitable first, so an abort can neither keep
    nor repeat its writes, and every overlapping section aborts."""
    _in_place_alone(tx, "eval or exec of plain code")
    return source


def _in_place_alone(tx: Optional[Transaction], why: str) -> None:
    """Before plain code runs in place: a section becomes inevitable, a
    coroutine step takes W, and either holds RESHAPE_STRIPE, so that every
    section overlapping it aborts (plain code writes without versions)."""
    if tx is not None:
        if not tx.inevitable:
            tx.become_inevitable(why)
        hold((RESHAPE_STRIPE,))
    elif CURRENT.step is not None or WORLD_LOCK.held_by_current_thread():
        take_w_for_step()
        hold((RESHAPE_STRIPE,))


def plain_code_starts(why: str) -> None:
    """Plain code is about to run in place on this thread: an application
    module's body, whoever imports it (``importlib.import_module``,
    ``pickle.loads`` of one of its classes...; ``hook.InstrumentingLoader``).
    In a section or a coroutine step it runs alone (:func:`_in_place_alone`)."""
    _in_place_alone(CURRENT.tx, why)


def importing(tx: Optional[Transaction], module: str, level: int, names: tuple,
              package: Optional[str]) -> None:
    """Before ``import module`` (``names`` empty) or ``from module import names``
    in a function: a module imported for the first time runs its body there,
    as plain code (module bodies are not instrumented), writing in place what
    it writes (a plugin registering itself in a shared dict): alone, as
    ``exec`` of text runs. A module already imported costs a lookup."""
    try:
        base = importlib.util.resolve_name("." * level + module, package) if level else module
    except (ImportError, ValueError):
        return                          # the statement itself raises
    loaded = sys.modules.get(base)
    if loaded is not None and all(name == "*" or f"{base}.{name}" in sys.modules
                                  or name in getattr(loaded, "__dict__", ()) for name in names):
        return
    _in_place_alone(tx, f"the first import of {base or package} (its body runs as plain code)")


def raised(tx: Optional[Transaction], exc: Any) -> Any:
    """The operand of ``raise``. Raising an exception object writes its
    ``__traceback__``, ``__context__`` and ``__cause__`` in place, from C: an
    optimistic section raising one it did not make (a module's sentinel,
    one kept in shared state) becomes inevitable first. Its own, a class,
    and the exception being handled (``except E as e: raise e``) are raised
    as they are."""
    if tx is None or tx.inevitable or id(exc) in tx.private or isinstance(exc, type) \
            or exc is sys.exception() or not isinstance(exc, BaseException):
        return exc
    tx.become_inevitable(f"raise of a shared {policy.qualified_name(type(exc))}")
    return exc


def awaited(value: Any) -> Any:
    """The operand of ``await``: itself, or for a future of another event
    loop (one loop per thread), a future of this one with its outcome
    (``section.on_this_loop``)."""
    if of_another_loop(value):
        return on_this_loop(value)
    return value


def tick(tx: Optional[Transaction]) -> None:
    """Once per ``while`` iteration: re-validate now and then, so no zombie loops for ever."""
    if tx is not None and not tx.inevitable:
        tx.tick()


def augmented(tx: Optional[Transaction], op: Any, target: Any, value: Any) -> Any:
    """``target op= value``; returns what the statement stores back."""
    if tx is None and not (type(target) in _SCALARS and type(value) in _SCALARS):
        take_w_for_step()
    if isinstance(target, CONTAINER_TYPES):
        if tx is not None and not tx.inevitable and id(target) not in tx.private:
            # The operand as read now: a shared container's private copy; a
            # generator or iterator another section made (``log += gen``,
            # consumed by C) makes the section inevitable first.
            value = tx.read_shadow(value) if isinstance(value, CONTAINER_TYPES) \
                and id(value) not in tx.private else view(tx, value)
        if tx is None or tx.inevitable:
            if tx is not None and id(target) in tx.private:
                return op(target, value)
            return direct_container_call((target,), op, (target, value), {})
        if id(target) not in tx.private:
            op(tx.shadow_for_write(target), value)
            return target
    if isinstance(target, MUTABLE_BUFFER_TYPES) and (tx is None or id(target) not in tx.private):
        # log += b"x" on a shared bytearray or array changes it in place, and
        # its contents have no versions: inevitably, under W, the object's
        # stripe bumped (a retry applied it again; two threads could race).
        if tx is not None:
            read_other_shared(tx, target)
        return direct_write((stripe_of_object(id(target)),), op, target, view(tx, value))
    if _changes_in_library_code(tx, target):
        # UL += [x] on a shared UserList: UserList.__iadd__ changes UL.data in
        # place: inevitably, with what it reaches held, as unknown code.
        if tx is not None and not tx.inevitable:
            tx.become_inevitable(f"{policy.qualified_name(type(target))} changed in place")
        return direct_call_reaching(tx, op, (target, value), {})
    if tx is not None and not tx.inevitable:
        # counter += shared_list (an instance's __iadd__) or n += 1: the value as read now.
        value = operand(tx, value)
    return op(target, value)


def _changes_in_library_code(tx: Optional[Transaction], target: Any) -> bool:
    """True for ``target op= value`` where ``target`` is a shared instance of a
    class whose operators are library Python (a UserList, a WeakValueDictionary)."""
    return is_shared_instance(tx, target) and has_plain_operators(type(target), True)


#: Every context manager whose ``__enter__`` blocks until another thread lets go.
_BLOCKING_LOCKS = (type(threading.Lock()), type(threading.RLock()), threading.Condition,
                   threading.Semaphore)


def context_manager(tx: Optional[Transaction], obj: Any) -> Any:
    """The object of a ``with`` or ``async with``: its ``__enter__`` runs without
    a barrier. A section or a step takes a lock only while holding W, so
    that it never waits for W holding one: a coroutine step takes W first
    if it does not hold it yet; a section becomes inevitable first (one
    that took a lock optimistically and then had to become inevitable
    would wait for W holding the lock, while an inevitable section holding
    W waits for that lock). Plain code (a thread the application started)
    enters the lock as it is: it may then wait for W for a write, but every
    holder of W that could wait for its lock (an inevitable section, a
    step) lends W to plain code (``WorldLock.open_to_plain_code``), so a
    ``Condition.wait()`` in its block lets producers in."""
    if tx is None:
        if CURRENT.step is not None:
            take_w_for_step()
    elif isinstance(obj, _BLOCKING_LOCKS):
        if not tx.inevitable:
            tx.become_inevitable(f"entering a {type(obj).__name__}")
    elif not _enters_safely(obj):
        if not tx.inevitable:
            tx.become_inevitable(f"entering a {policy.qualified_name(type(obj))}")
        if hasattr(type(obj), "__enter__"):
            return _EnteredInPlace(tx, obj)
    return obj


class _EnteredInPlace:
    """A library context manager entered by an inevitable section: its
    ``__enter__`` and ``__exit__`` are unknown code run in place, so they run
    as unknown calls do (:func:`reach.direct_call_reaching`), with the
    stripes of what they reach held (``mock.patch.object`` sets a class
    attribute its readers version)."""

    __slots__ = ("tx", "manager")

    def __init__(self, tx: Transaction, manager: Any) -> None:
        self.tx = tx
        self.manager = manager

    def __enter__(self) -> Any:
        return direct_call_reaching(self.tx, type(self.manager).__enter__, (self.manager,), {})

    def __exit__(self, *exc_info: Any) -> Any:
        return direct_call_reaching(self.tx, type(self.manager).__exit__,
                                    (self.manager, *exc_info), {})


#: Library context managers whose ``__enter__`` and ``__exit__`` change nothing
#: outside the object itself.
_HARMLESS_MANAGERS = (contextlib.suppress, contextlib.nullcontext)
#: Library managers that drive an application generator (``@contextmanager``).
_GENERATOR_MANAGERS = (contextlib._GeneratorContextManager,
                       contextlib._AsyncGeneratorContextManager)
_ENTRY_METHODS = ("__enter__", "__exit__", "__aenter__", "__aexit__")
_enters_safely_by_type: dict[type, bool] = {}


def _enters_safely(obj: Any) -> bool:
    """Whether an optimistic section may enter ``obj`` as it is: its entry and
    exit code is the application's (instrumented, so its accesses are
    barriered), a harmless library manager, or ``@contextmanager`` around an
    application generator. Any other ``__enter__`` runs in place, unlogged
    (``redirect_stdout`` swapping ``sys.stdout``, ``mock.patch`` setting a
    class attribute): the section becomes inevitable first."""
    kind = type(obj)
    if kind in _GENERATOR_MANAGERS:
        generator = obj.gen
        code = getattr(generator, "gi_code", None) or getattr(generator, "ag_code", None)
        return code in INSTRUMENTED_CODES
    answer = _enters_safely_by_type.get(kind)
    if answer is None:
        methods = [getattr(kind, name, None) for name in _ENTRY_METHODS]
        answer = issubclass(kind, _HARMLESS_MANAGERS) or all(
            method is None or is_instrumented(method) for method in methods)
        _enters_safely_by_type[kind] = answer
    return answer


def new(tx: Optional[Transaction], obj: Any) -> Any:
    """Mark an object created by a display or comprehension as private."""
    if tx is not None:
        tx.mark_private(obj)
    return obj


def own_item(tx: Optional[Transaction], container: Any, key: Any) -> Any:
    """``container[key]`` of a container the section made (``mine[1:3] += [x]``):
    read in place; a slice is a new list, the section's own."""
    item = container[key]
    if type(key) is slice and tx is not None:
        tx.mark_private(item)
    return item


class Box:
    """The cell of a closure variable that nested functions assign (``nonlocal``).

    The instrumenter keeps such variables in a Box so that their reads and
    writes go through the attribute barriers like any shared location.
    """

    __slots__ = ("value", "name")

    def __init__(self, name: str, *value: Any) -> None:
        self.name = name
        if value:
            self.value = value[0]

    def __getattr__(self, attribute: str) -> Any:
        # Only ``value`` can be missing: the variable is unbound (never
        # assigned yet, or deleted by ``del`` or by the end of ``except ... as``).
        raise NameError(f"cannot access variable {self.name!r} where it is not "
                        "associated with a value")


# -- calls --------------------------------------------------------------------

def call(tx: Optional[Transaction], f: Any, /, *args: Any, **kwargs: Any) -> Any:
    try:
        kind = type(f)
        if kind is PendingMethod:
            f = f.resolve()
            kind = type(f)
        if kind is FunctionType:
            code = f.__code__
            if code is ENTRY_CODE:
                return entry_target(f)(*args, **kwargs)
            if code in INSTRUMENTED_CODES:
                result = f(*args, **kwargs)
                if tx is not None and isinstance(result, FRAME_TYPES):
                    tx.mark_private(result)
                return result
        elif kind is MethodType:
            func = f.__func__
            if type(func) is FunctionType and func.__code__ is ENTRY_CODE:
                return entry_target(func)(f.__self__, *args, **kwargs)
        elif not issubclass(kind, type) and _calls_instrumented_code(kind):
            # An instance of an application class with __call__: that method's
            # own code reads through the barriers (asked of the class, so that
            # the instance's own __getattr__ never runs for the engine's sake).
            return f(*args, **kwargs)
        if tx is None or tx.inevitable:
            return call_direct(tx, f, args, kwargs)
        return call_optimistic(tx, f, args, kwargs)
    except BaseException as error:
        # The Python barriers' own frames leave the traceback of an exception
        # passing through (the C ones add none): application code that
        # catches it sees the frames a plain call would show.
        _hide_engine_frames(error)
        raise


def frame_names(tx: Optional[Transaction], names: Any) -> Any:
    """What ``locals()``, ``vars()`` or ``dir()`` (or a frame's ``f_locals``)
    gives application code: without the rewriter's own names (``_stm_tx``,
    temporaries), and a nonlocal variable's value rather than its Box (left
    out while unbound, as plain Python does)."""
    if isinstance(names, list):
        return [name for name in names if not name.startswith(_ENGINE_NAMES)]
    kept = {}
    for name, value in names.items():
        if isinstance(name, str) and name.startswith(_ENGINE_NAMES):
            continue
        if type(value) is Box:
            try:
                value = get_attr(tx, value, "value")
            except NameError:
                continue
        kept[name] = value
    return kept


#: The prefixes of the names the rewriter adds to a function's frame.
_ENGINE_NAMES = ("_stm_", "__stm_")


def recursive_callee(tx: Optional[Transaction], f: Any) -> Any:
    """What a function's call of its own name (``walk(n - 1)`` in ``walk``)
    calls from the application's frame: the function itself when it is a
    plain instrumented one (as :func:`call` would call it, without the call
    barrier's C frame: deep recursion then needs no C stack), else ``f``
    through the call barrier (the name was rebound: a decorator's wrapper)."""
    func = f.__func__ if type(f) is MethodType else f       # self.walk in a method walk
    if type(func) is FunctionType:
        target = entry_target(func) if func.__code__ is ENTRY_CODE else func
        if type(target) is FunctionType and not target.__code__.co_flags & STEPPED_FLAGS and (
                target is not func or target.__code__ in INSTRUMENTED_CODES):
            return target if func is f else MethodType(target, f.__self__)
    return functools.partial(call, tx, f)


def _hide_engine_frames(error: BaseException) -> None:
    """Drop the engine's frames from ``error``'s traceback (not from an abort's),
    as :func:`section.run_section` does for an exception leaving a section."""
    if error.__traceback__ is not None and not isinstance(error, AbortSection):
        error.__traceback__ = without_engine_frames(error.__traceback__)


def _calls_instrumented_code(kind: type) -> bool:
    """True if calling an instance of ``kind`` runs an instrumented ``__call__``."""
    dunder = getattr(kind, "__call__", None)
    return type(dunder) is FunctionType and (dunder.__code__ is ENTRY_CODE
                                             or dunder.__code__ in INSTRUMENTED_CODES)


# The layer below hands work back to these (see txn.BarriersAbove);
# tornado_stm.stm.start() enters the C ones once installed.
BARRIERS_ABOVE.call, BARRIERS_ABOVE.deep_view = call, deep_view
