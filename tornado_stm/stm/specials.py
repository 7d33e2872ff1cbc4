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

import weakref
from types import MethodWrapperType, ModuleType
from typing import Any, Optional

from tornado_stm.stm import policy
from tornado_stm.stm.attrkinds import refuses_attribute
from tornado_stm.stm.barriers import (contains, del_attr, del_item, get_attr, get_item,
                                      instance_dict, set_attr, set_item)
from tornado_stm.stm.calls import (ADVANCING_A_SHARED_ITERATOR, call_reading,
                                   direct_container_call, handed_out_iterator,
                                   is_shared_iterator)
from tornado_stm.stm.section import after_the_section
from tornado_stm.stm.txn import Transaction, direct_write
from tornado_stm.stm.versions import stripe_of_key


def _special_getattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    if kwargs or not 2 <= len(args) <= 3:
        return getattr(*args, **kwargs)         # the usual TypeError
    if type(args[1]) is not str:
        return getattr(*args)
    if args[1] == "__dict__":
        return instance_dict(tx, args[0])       # also in an inevitable section
    return get_attr(tx, args[0], args[1], *args[2:])


def _special_hasattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> bool:
    if kwargs or len(args) != 2 or type(args[1]) is not str:
        return hasattr(*args, **kwargs)
    sentinel = object()
    return get_attr(tx, args[0], args[1], sentinel) is not sentinel


def _special_setattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> None:
    if kwargs or len(args) != 3 or type(args[1]) is not str:
        return setattr(*args, **kwargs)
    set_attr(tx, *args)


def _special_delattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> None:
    if kwargs or len(args) != 2 or type(args[1]) is not str:
        return delattr(*args, **kwargs)
    del_attr(tx, *args)


def _special_object_setattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> None:
    """``object.__setattr__(self, name, value)`` inside a custom ``__setattr__``, and the
    same slot bound to its object: ``super().__setattr__(name, value)``, ``obj.__setattr__``;
    ``type.__setattr__(cls, name, value)`` likewise, in a metaclass."""
    if type(f) is MethodWrapperType:
        args = (f.__self__, *args)
        # (type.__setattr__ when bound to a class: super().__setattr__ in a metaclass)
        f = type.__setattr__ if getattr(f, "__objclass__", object) is type else object.__setattr__
    if len(args) == 3 and isinstance(args[0], ModuleType) and not kwargs:
        return set_attr(tx, *args)          # a module's attributes live in its dict
    if kwargs or len(args) != 3 or (tx is not None and id(args[0]) in tx.private) \
            or (f is object.__setattr__ and isinstance(args[0], type)) \
            or (f is type.__setattr__ and not isinstance(args[0], type)):
        # (each refuses the other's objects, with a TypeError)
        return f(*args, **kwargs)
    if tx is not None and not tx.inevitable and isinstance(args[1], str) \
            and refuses_attribute(type(args[0]), args[1]):
        tx.become_inevitable("object.__setattr__ of an attribute the object cannot hold")
    if tx is None or tx.inevitable:
        return direct_write((stripe_of_key(id(args[0]), args[1]),), f, *args)
    tx.write_attr(*args)


def _special_next(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    if (tx is not None and not tx.inevitable and args and id(args[0]) not in tx.private
            and is_shared_iterator(args[0])):
        tx.become_inevitable(ADVANCING_A_SHARED_ITERATOR)
    return f(*args, **kwargs)


def _special_iter(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """``iter(x)``: a new iterator is the section's own; ``iter(it)`` is ``it`` itself."""
    if tx is None or tx.inevitable or kwargs or len(args) != 1:
        return f(*args, **kwargs)
    return handed_out_iterator(tx, args[0], call_reading(tx, f, args, kwargs))


def _per_key(writes: bool) -> Any:
    """Make a special handler of a dict method ``(key[, default])`` from its per-key version.

    The common cases are handled here: a private dict, or a section that is
    not optimistic, calls the method itself (in place, with the dict's
    stripes bumped when the method ``writes``); unusual arguments go to the
    method for its own error.
    """
    def wrap(per_key: Any) -> Any:
        def handler(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
            d = f.__self__
            if tx is not None and id(d) in tx.private:
                return f(*args, **kwargs)
            if tx is None or tx.inevitable:
                return direct_container_call(d, f, args, kwargs) if writes else f(*args, **kwargs)
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


#: The callables with a handler here, and their handlers.
SPECIALS = ((getattr, _special_getattr), (hasattr, _special_hasattr),
            (setattr, _special_setattr), (delattr, _special_delattr),
            (object.__setattr__, _special_object_setattr),
            (type.__setattr__, _special_object_setattr), (next, _special_next),
            (iter, _special_iter),
            (dict.get, _special_dict_get), (dict.setdefault, _special_dict_setdefault),
            (dict.pop, _special_dict_pop), (weakref.ref, _special_weakref))


def register() -> None:
    """Enter the handlers in the policy table (:func:`tornado_stm.stm.start` does it once)."""
    for callable_, handler in SPECIALS:
        policy.register_special(callable_, handler)
