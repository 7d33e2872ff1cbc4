"""Special methods an application binds without a ``def`` of their name.

The interpreter calls a class's special methods itself (``reg[k]``,
``len(reg)``, ``for k in reg``, ``cfg.name`` through ``__getattr__``, the
truth of what ``__eq__`` returns), where no barrier of the caller stands. A
``def`` of that name in an instrumented module is instrumented code, and the
rewriter gives the methods whose result C tests a return through
``barriers.compared``. A method bound another way is not:

* a C method of a mutable object (``__getitem__ = TABLE.__getitem__``,
  ``__getattr__ = dict.__getitem__``, ``__len__ = staticmethod(D.__len__)``,
  ``functools.partial(len, D)``, ``types.MethodType(dict.__len__, D)``)
  would read the live container, past the section's log: it becomes a
  function that calls it through the call barrier (:func:`special_method`);
* a lambda or a function under another name as ``__eq__`` (and its kin,
  ``barriers.compared``) returns through ``compared`` (:func:`tested_method`).

They are applied where the binding can be seen: a class statement's
assignments (by the rewriter), every class statement once it is made
(:func:`audited_class`, the outermost decorator the rewriter adds: class
decorators, a metaclass filling the namespace, ``locals()[...]``), an
attribute set on a class in a section (``Cls.__len__ = f``,
``setattr(Cls, ...)``: ``barriers.set_attr``) and the namespace of
``type(name, bases, ns)`` called in a section (``calls.call_optimistic``).
"""

from __future__ import annotations

import functools
import sys
from types import (BuiltinMethodType, MethodDescriptorType, MethodType, MethodWrapperType,
                   ModuleType, WrapperDescriptorType)
from typing import Any, Optional

from tornado_stm.stm.attrkinds import IMMUTABLE_TYPES
from tornado_stm.stm.registry import INSTRUMENTED_CODES, is_instrumented
from tornado_stm.stm.section import ENTRY_CODE, entry, entry_target, wraps_with_defaults
from tornado_stm.stm.txn import CURRENT

#: Methods whose result the interpreter or C code tests itself (rich
#: comparisons, ``in``, a ``with``'s exit): it goes through barriers.compared.
TESTED_RESULTS = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                            "__contains__", "__exit__", "__aexit__"})
#: Special names that never hold a method (``__del__`` has rules of its own:
#: ``section.finalizer``).
_NOT_METHODS = frozenset({"__slots__", "__doc__", "__module__", "__qualname__", "__dict__",
                          "__class__", "__annotations__", "__match_args__", "__all__",
                          "__weakref__", "__name__", "__del__"})


def _barrier(name: str) -> Any:
    """A barrier of ``tornado_stm.stm.barriers``, which imports this module (the
    C one once the fast path is installed)."""
    return getattr(sys.modules["tornado_stm.stm.barriers"], name)


def is_special_name(name: str) -> bool:
    """True for ``__name__``-shaped names that may hold a special method."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__") \
        and name not in _NOT_METHODS


def _mutable(obj: Any) -> bool:
    return not isinstance(obj, (ModuleType, type)) and type(obj) not in IMMUTABLE_TYPES


def _called_without_self(method: Any) -> Optional[Any]:
    """The callable behind ``method`` if the class calls it without the
    instance and it is C code that reads a mutable object (else None)."""
    if isinstance(method, staticmethod):
        method = method.__func__
    if isinstance(method, (BuiltinMethodType, MethodWrapperType)):
        owner = getattr(method, "__self__", None)
        return method if owner is not None and _mutable(owner) else None
    if isinstance(method, MethodType):             # types.MethodType(dict.__len__, D)
        return method if not is_instrumented(method.__func__) else None
    if isinstance(method, functools.partial):      # partial(len, D)
        return method if not is_instrumented(method.func) else None
    return None


def _reads_its_instance(method: Any, name: Optional[str]) -> bool:
    """True for a C method of a mutable builtin type bound to the instance
    under another name (``__getattr__ = dict.__getitem__`` on a dict
    subclass). Under its own name (``__repr__ = dict.__repr__``) it is what
    the instance's type has anyway, and stays itself (pprint and others
    compare it by identity)."""
    return isinstance(method, (MethodDescriptorType, WrapperDescriptorType)) \
        and name is not None and name != method.__name__ \
        and method.__objclass__ not in (object, type) and method.__objclass__ not in IMMUTABLE_TYPES


def special_method(method: Any, name: Optional[str] = None) -> Any:
    """``method`` as a special method: C code reading a mutable object is
    called through the call barrier, as ``TABLE[key]`` written out is read.

    A method the class calls without the instance (a bound method, a
    ``staticmethod``, a ``partial``) stays one: the wrapper is a
    ``staticmethod``, so ``Cls.__getitem__`` is as plain Python gives it.
    Anything else is returned as it is.
    """
    if getattr(getattr(method, "__func__", method), "__stm_special__", False):
        return method
    callee = _called_without_self(method)
    binds_self = callee is None and _reads_its_instance(method, name)
    if callee is None and not binds_self:
        return method
    callee = method if binds_self else callee

    def delegated(*args: Any, **kwargs: Any) -> Any:
        return _barrier("call")(CURRENT.tx, callee, *args, **kwargs)

    delegated.__name__ = delegated.__qualname__ = getattr(method, "__name__", "special")
    INSTRUMENTED_CODES.add(delegated.__code__)
    wrapper = entry(delegated)
    wrapper.__stm_special__ = True                 # type: ignore[attr-defined]
    return wrapper if binds_self else staticmethod(wrapper)


def tested_method(method: Any, name: Optional[str] = None) -> Any:
    """``method`` as ``__eq__`` (or another of ``TESTED_RESULTS``): a lambda,
    an instrumented function under another name, a ``partialmethod`` of one,
    or C code made so by :func:`special_method`, returns through
    ``barriers.compared`` as a ``def __eq__`` does. Anything else (library
    code) is bound as it is."""
    if isinstance(method, functools.partialmethod):
        return functools.partialmethod(tested_method(method.func), *method.args,
                                       **method.keywords)
    method = special_method(method, name)
    if isinstance(method, staticmethod):
        return staticmethod(tested_method(method.__func__))
    if getattr(method, "__code__", None) is not ENTRY_CODE \
            or getattr(method, "__stm_tested__", False):
        return method
    target = entry_target(method)

    def result_tested(*args: Any, **kwargs: Any) -> Any:
        return _barrier("compared")(CURRENT.tx, target(*args, **kwargs))

    wraps_with_defaults(result_tested, target)
    INSTRUMENTED_CODES.add(result_tested.__code__)
    wrapper = entry(result_tested)
    wrapper.__stm_tested__ = True                  # type: ignore[attr-defined]
    return wrapper


def bound_special(name: str, value: Any) -> Any:
    """``value`` as bound under ``name`` on a class at run time (a class
    statement's namespace as made, ``setattr(Cls, name, value)``, the
    namespace of ``type(...)``): C code reading mutable objects goes through
    the call barrier, and as one of ``TESTED_RESULTS`` returns through
    ``compared``. (A function there is left as it is: the rewriter gave the
    forms it sees their rules.)"""
    if not isinstance(name, str) or not is_special_name(name):
        return value
    wrapped = special_method(value, name)
    if wrapped is not value and name in TESTED_RESULTS:
        wrapped = tested_method(wrapped, name)
    return wrapped


def audited_class(cls: type) -> type:
    """The outermost decorator of an instrumented class statement: the special
    methods the class got in ways the rewriter cannot see (a class decorator,
    a tuple target, a metaclass filling the namespace) get their rules.
    Whatever else a class statement made (a decorator may return anything)
    is returned as it is."""
    if not isinstance(cls, type):
        return cls
    for name, value in list(vars(cls).items()):
        wrapped = bound_special(name, value)
        if wrapped is not value:
            type.__setattr__(cls, name, wrapped)
    return cls


def audited_namespace(namespace: Any) -> Any:
    """The namespace of ``type(name, bases, namespace)``: a copy with the rules
    of :func:`bound_special` where a value needs them, else itself."""
    if not isinstance(namespace, dict):
        return namespace
    changed = {name: bound_special(name, value) for name, value in namespace.items()}
    if all(changed[name] is namespace[name] for name in changed):
        return namespace
    return {**namespace, **changed}


def audit_module_classes(module: ModuleType) -> None:
    """:func:`audited_class` for the classes ``module`` made, once its code has
    set them up plainly (``setattr(Cls, "__len__", TABLE.__len__)`` or
    ``type(...)`` at its top level, which no barrier sees): at the end of
    its import, and when a script's ``transaction.run()`` starts."""
    name = module.__name__
    seen: set[int] = set()
    # its classes, the classes of its instances (REG = type(...)()), and the
    # classes nested in those
    kinds = [value if isinstance(value, type) else type(value)
             for value in list(vars(module).values())]
    while kinds:
        kind = kinds.pop()
        if id(kind) in seen or kind.__dict__.get("__module__") != name:
            continue
        seen.add(id(kind))
        audited_class(kind)
        kinds.extend(value for value in list(vars(kind).values()) if isinstance(value, type))
