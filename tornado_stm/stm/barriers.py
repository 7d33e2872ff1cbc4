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
section entry wrapper: nested application calls are plain calls.
"""

from __future__ import annotations

import builtins
import itertools
import operator
from collections import OrderedDict, deque
from types import (BuiltinFunctionType, CoroutineType, FunctionType, GeneratorType,
                   MethodType, MethodWrapperType, ModuleType, AsyncGeneratorType)
from typing import Any, Optional

from tornado_stm.stm import policy
from tornado_stm.stm.attrkinds import (CLASS_VALUE, IMMUTABLE, IMMUTABLE_TYPES, MODULE,
                                       NONDATA, PLAIN, RUN, TYPE_ATTR, W_PLAIN, W_RUN, read_kind,
                                       write_kind)
from tornado_stm.stm.registry import INSTRUMENTED_CODES, is_instrumented
from tornado_stm.stm.section import ENTRY_CODE
from tornado_stm.stm.txn import (CONTAINER_TYPES, VERSIONS, Transaction, _local, direct_write,
                                 hold)
from tornado_stm.stm.versions import stripe_of_key, stripe_of_object

_BUILTINS = builtins.__dict__
_FRAMES = (GeneratorType, CoroutineType, AsyncGeneratorType)


def current() -> Optional[Transaction]:
    """The transaction of this thread (``None`` outside sections)."""
    return _local.tx


# -- attributes -------------------------------------------------------------

def get_attr(tx: Optional[Transaction], obj: Any, name: str, *default: Any) -> Any:
    if tx is None or tx.inevitable:
        return getattr(obj, name, *default)
    kind, owner = read_kind(type(obj), name)
    if id(obj) in tx.private and kind != CLASS_VALUE:
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
        if kind == NONDATA and tx.versioned(stripe_of_key(id(obj), name),
                                            _in_instance_dict, obj, name):
            return tx.read_attr(obj, name)
    except AttributeError:
        if default:
            return default[0]
        raise
    _inevitable(tx, f"attribute {policy.qualified_name(type(obj))}.{name}")
    return getattr(obj, name, *default)


def _in_instance_dict(obj: Any, name: str) -> bool:
    return name in getattr(obj, "__dict__", ())


def _module_attr(tx: Transaction, module: ModuleType, name: str) -> Any:
    try:
        return tx.read_dict_item(module.__dict__, name)
    except KeyError:
        return getattr(module, name)      # module __getattr__, or the proper AttributeError


def set_attr(tx: Optional[Transaction], obj: Any, name: str, value: Any) -> None:
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
        _inevitable(tx, f"setting {policy.qualified_name(type(obj))}.{name}")
    if tx is not None and id(obj) in tx.private:
        setattr(obj, name, value)
    elif isinstance(obj, ModuleType):
        _direct_dict_op(obj.__dict__, name, operator.setitem, value)
    else:
        direct_write((stripe_of_key(id(obj), name),), setattr, obj, name, value)


def del_attr(tx: Optional[Transaction], obj: Any, name: str) -> None:
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
        kind = write_kind(type(obj), name)
        if kind == W_PLAIN:
            tx.delete_attr(obj, name)
            return
        if kind == W_RUN:
            delattr(obj, name)
            return
        _inevitable(tx, f"deleting {policy.qualified_name(type(obj))}.{name}")
    if tx is not None and id(obj) in tx.private:
        delattr(obj, name)
    else:
        direct_write((stripe_of_key(id(obj), name),), delattr, obj, name)


# -- subscripts ---------------------------------------------------------------

def get_item(tx: Optional[Transaction], obj: Any, key: Any) -> Any:
    if tx is None or tx.inevitable:
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
    _judge_method(tx, kind, "__getitem__")
    return obj[key]


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
        if method is not None:
            if is_instrumented(method):
                return
            if name in ("__getitem__", "__contains__") and policy.lookup(method).kind == "pure":
                return
            break
    _inevitable(tx, f"{policy.qualified_name(kind)}.{name}")


def _direct_item_op(tx: Optional[Transaction], obj: Any, key: Any, op: Any, *value: Any) -> None:
    if tx is not None and id(obj) in tx.private:
        op(obj, key, *value)
    elif isinstance(obj, dict):
        _direct_dict_op(obj, key, op, *value)
    elif isinstance(obj, (list, set, deque)):
        direct_write((stripe_of_object(id(obj)),), op, obj, key, *value)
    else:
        op(obj, key, *value)


def _direct_dict_op(d: dict, key: Any, op: Any, *value: Any) -> None:
    direct_write((stripe_of_key(id(d), key), stripe_of_object(id(d))), op, d, key, *value)


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
    if tx is None or tx.inevitable:
        _direct_dict_op(namespace, name, operator.setitem, value)
    else:
        tx.write_dict_item(namespace, name, value)


def del_global(tx: Optional[Transaction], namespace: dict, name: str) -> None:
    try:
        if tx is None or tx.inevitable:
            _direct_dict_op(namespace, name, operator.delitem)
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
    run would.
    """
    if tx is None or tx.inevitable or id(obj) in tx.private:
        return obj
    if isinstance(obj, CONTAINER_TYPES):
        return tx.read_shadow(obj)
    if isinstance(obj, _FRAMES):
        _inevitable(tx, "resuming a generator or coroutine from outside the section")
    return obj


def contains(tx: Optional[Transaction], item: Any, container: Any) -> bool:
    if tx is None or tx.inevitable:
        return item in container
    kind = type(container)
    if kind in IMMUTABLE_TYPES or id(container) in tx.private:
        return item in container
    if isinstance(container, dict):
        return tx.dict_contains(container, item)
    if isinstance(container, (list, set, deque)):
        return tx.whole_read(container, operator.contains, item)
    _judge_method(tx, kind, "__contains__")
    return item in container


# -- values read by uninstrumented code: operators, tests, formatting, unpacking ----

def view(tx: Optional[Transaction], obj: Any) -> Any:
    """``obj`` as an operator, an unpacking or a starred argument reads it right now.

    The rewriter wraps the operands of ``+``, ``|``, ``-``..., unpacked and
    starred values and ``**`` mappings. A shared container the section
    wrote is replaced by its private copy (identity never matters in those
    places); one it did not write is returned itself, its read recorded
    (and checked again at commit). A bound method of a shared container is
    re-bound to the section's copy.
    """
    if tx is None or tx.inevitable:
        return obj
    kind = type(obj)
    if kind in IMMUTABLE_TYPES or id(obj) in tx.private:
        return obj
    if isinstance(obj, CONTAINER_TYPES):
        log = tx.containers.get(id(obj))
        if log is not None:
            return tx.materialize(log)
        tx.touch(obj)
        return obj
    owner = _bound_container(obj)
    if owner is not None and id(owner) not in tx.private:
        return getattr(tx.read_shadow(owner), obj.__name__)
    return obj


#: Elements deep_view() looks at inside a value before it gives up and makes
#: the section inevitable.
DEEP_VIEW_BUDGET = 100_000


def deep_view(tx: Optional[Transaction], obj: Any) -> Any:
    """``obj`` as a comparison or a format reads it: :func:`view`, nested containers too.

    ``==``, ``<``, ``repr``, f-strings, ``sorted`` and ``max`` read the
    containers nested in a value as well (a list of lists). Their reads
    are recorded; if the section wrote one of them (the nested read would
    miss that write), or the value is too large to scan, the section
    becomes inevitable, so the read sees exactly what a serial run would.
    """
    if tx is None or tx.inevitable:
        return obj
    kind = type(obj)
    if (kind in IMMUTABLE_TYPES and kind is not tuple) or id(obj) in tx.private:
        return obj
    result = obj if kind is tuple else view(tx, obj)
    if isinstance(result, (tuple, *CONTAINER_TYPES)) and not _record_nested(tx, result):
        _inevitable(tx, "deep read of a shared structure outside the barriers")
        return obj
    return result


def _record_nested(tx: Transaction, root: Any) -> bool:
    """Record reads of the shared containers nested in ``root``; False if that cannot be done.

    The nested containers are scanned as they are: one that a commit is
    changing meanwhile ("changed size during iteration") makes the answer
    False too, and the caller becomes inevitable.
    """
    try:
        return _scan_nested(tx, root)
    except RuntimeError:
        return False


def _scan_nested(tx: Transaction, root: Any) -> bool:
    stack = [root]
    budget = DEEP_VIEW_BUDGET
    while stack:
        item = stack.pop()
        budget -= len(item)
        if budget < 0:
            return False
        for element in (item.items() if isinstance(item, dict) else item):
            kind = type(element)
            if kind in IMMUTABLE_TYPES and kind is not tuple:
                continue
            if kind is tuple:
                stack.append(element)
            elif isinstance(element, CONTAINER_TYPES) and id(element) not in tx.private:
                log = tx.containers.get(id(element))
                if log is not None and log.changed():
                    return False
                tx.touch(element)
                stack.append(element)
    return True


def truth(tx: Optional[Transaction], obj: Any) -> bool:
    """``bool(obj)`` in ``if``, ``while``, ``not``, ``assert``, comprehension tests."""
    if tx is None or tx.inevitable or type(obj) in IMMUTABLE_TYPES or id(obj) in tx.private:
        return bool(obj)
    if isinstance(obj, CONTAINER_TYPES):
        return tx.whole_read(obj, bool)
    return bool(obj)


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
            _inevitable(tx, "testing a container this section wrote, in 'and'/'or'")
        else:
            tx.touch(obj)
    return obj


#: The operators of binary(), by index (the rewriter and _fastpath.c use the same order).
BINARY_OPERATORS = (operator.add, operator.sub, operator.mul, operator.truediv,
                    operator.floordiv, operator.mod, operator.pow, operator.lshift,
                    operator.rshift, operator.or_, operator.xor, operator.and_, operator.matmul)
#: The comparisons of compare(), by index (same order in the rewriter and _fastpath.c).
COMPARE_OPERATORS = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                     operator.ge)


def binary(tx: Optional[Transaction], op: int, left: Any, right: Any) -> Any:
    """``left OP right`` with both operands read through :func:`view`: one barrier
    call where the rewriter would otherwise emit two."""
    return BINARY_OPERATORS[op](view(tx, left), view(tx, right))


def compare(tx: Optional[Transaction], op: int, left: Any, right: Any) -> Any:
    """``left OP right`` (``==``, ``<``...) with both operands read through
    :func:`deep_view`: one barrier call where the rewriter would emit two."""
    return COMPARE_OPERATORS[op](deep_view(tx, left), deep_view(tx, right))


def tick(tx: Optional[Transaction]) -> None:
    """Once per ``while`` iteration: re-validate now and then, so no zombie loops for ever."""
    if tx is not None and not tx.inevitable:
        tx.tick()


def augmented(tx: Optional[Transaction], op: Any, target: Any, value: Any) -> Any:
    """``target op= value``; returns what the statement stores back."""
    if isinstance(target, CONTAINER_TYPES):
        if tx is None or tx.inevitable:
            if tx is not None and id(target) in tx.private:
                return op(target, value)
            return _direct_container_call(target, op, (target, value), {})
        if id(target) not in tx.private:
            op(tx.shadow_for_write(target), tx.read_shadow(value) if isinstance(
                value, CONTAINER_TYPES) and id(value) not in tx.private else value)
            return target
    if tx is not None and not tx.inevitable:
        # counter += shared_list (an instance's __iadd__) or n += 1: the value as read now.
        value = view(tx, value)
    return op(target, value)


def new(tx: Optional[Transaction], obj: Any) -> Any:
    """Mark an object created by a display or comprehension as private."""
    if tx is not None:
        tx.private[id(obj)] = obj
    return obj


class Box:
    """The cell of a closure variable that nested functions assign (``nonlocal``).

    The instrumenter keeps such variables in a Box so that their reads and
    writes go through the attribute barriers like any shared location.
    """

    __slots__ = ("value",)

    def __init__(self, *value: Any) -> None:
        if value:
            self.value = value[0]


# -- calls --------------------------------------------------------------------

def call(tx: Optional[Transaction], f: Any, /, *args: Any, **kwargs: Any) -> Any:
    kind = type(f)
    if kind is FunctionType:
        code = f.__code__
        if code is ENTRY_CODE:
            return f.__wrapped__(*args, **kwargs)
        if code in INSTRUMENTED_CODES:
            result = f(*args, **kwargs)
            if tx is not None and isinstance(result, _FRAMES):
                tx.private[id(result)] = result
            return result
    elif kind is MethodType:
        func = f.__func__
        if type(func) is FunctionType and func.__code__ is ENTRY_CODE:
            return func.__wrapped__(f.__self__, *args, **kwargs)
    if tx is None or tx.inevitable:
        return _call_direct(tx, f, args, kwargs)
    return _call_optimistic(tx, f, args, kwargs)


def _inevitable(tx: Transaction, cause: str) -> None:
    tx.become_inevitable(cause)


def _bound_container(f: Any) -> Any:
    """The shared-container kind of object a bound method belongs to, or None.

    C methods (``lst.append``, ``d.items``) and Python methods of container
    types (``Counter.update``) both count.
    """
    kind = type(f)
    if kind is BuiltinFunctionType or kind is MethodWrapperType or kind is MethodType:
        owner = f.__self__
        if isinstance(owner, CONTAINER_TYPES):
            return owner
    return None


#: Methods of containers whose result keeps reading the container later.
LAZY_METHODS = frozenset({"keys", "values", "items", "__iter__", "__reversed__", "elements"})


def _call_optimistic(tx: Transaction, f: Any, args: tuple, kwargs: dict) -> Any:
    rule = policy.lookup(f)
    if rule is policy.IRREVOCABLE and isinstance(f, type):
        rule = _class_policy(f)
    kind = rule.kind
    if kind == "special":
        return rule.handler(tx, f, args, kwargs)
    owner = _bound_container(f)
    if owner is not None:
        if id(owner) in tx.private:
            return _call_reading(tx, f, args, kwargs)
        if kind == "pure":
            name = f.__name__
            log = tx.containers.get(id(owner))
            if log is not None or name in LAZY_METHODS:
                method = getattr(tx.read_shadow(owner), name)
                return _fresh(tx, rule, _call_reading(tx, method, args, kwargs, original=f))
            return _fresh(tx, rule, _call_reading(tx, f, args, kwargs, also=owner))
        if kind == "mutates" and 0 in rule.writes:
            # dst.extend(src): the arguments are read consistently too.
            method = getattr(tx.shadow_for_write(owner), f.__name__)
            return _fresh(tx, rule, _call_reading(tx, method, args, kwargs, original=f))
    elif kind == "pure":
        return _fresh(tx, rule, _call_reading(tx, f, args, kwargs))
    elif kind == "mutates" and _can_shadow(tx, args, rule.writes):
        args = tuple(tx.shadow_for_write(arg) if index in rule.writes and id(arg) not in tx.private
                     else arg for index, arg in enumerate(args))
        return _fresh(tx, rule, _call_reading(tx, f, args, kwargs))
    if kind == "deep" and _deeply_private(tx, (args, kwargs)):
        # json.dumps of a structure built by this section: nothing shared to read.
        return f(*args, **kwargs)
    what = "deep read by" if kind == "deep" else "call to"
    _inevitable(tx, f"{what} {policy.qualified_name(f)}")
    return _call_direct(tx, f, args, kwargs)


#: How many objects _deeply_private() looks at before giving up.
DEEP_CHECK_BUDGET = 10_000


def _deeply_private(tx: Transaction, root: Any) -> bool:
    """True if ``root`` reaches only immutable values and containers private to ``tx``.

    The argument tuple and keyword dict themselves are the caller's; the
    containers inside them must be private. Other objects (instances) are
    assumed shared. Gives up (False) after ``DEEP_CHECK_BUDGET`` objects.
    """
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
                stack.extend(obj.keys())
                stack.extend(obj.values())
            elif kind is list or kind is set:
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
        if id(arg) not in tx.private and not isinstance(arg, CONTAINER_TYPES):
            return False
    return True


def _fresh(tx: Transaction, rule: policy.CallPolicy, result: Any) -> Any:
    if rule.fresh and type(result) not in IMMUTABLE_TYPES:
        tx.adopt(result)
    return result


#: Uninstrumented callables that compare, hash or format the values inside
#: their arguments: nested containers are read too (see deep_view).
DEEP_READERS: set = {repr, str, ascii, format, sorted, min, max, hash, print,
                     operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                     operator.ge, operator.contains, operator.countOf, operator.indexOf}
#: Callables whose result reads its arguments later (an iterator, a view).
LAZY_CALLABLES: set = {iter, reversed, enumerate, zip, map, filter, *(
    getattr(itertools, name) for name in (
        "chain", "islice", "cycle", "accumulate", "compress", "dropwhile", "takewhile",
        "filterfalse", "groupby", "starmap", "zip_longest", "pairwise")
    if hasattr(itertools, name))}


def _is_lazy(value: Any) -> bool:
    """True for a result that would read a container after the call returned."""
    kind = type(value)
    return kind not in IMMUTABLE_TYPES and (hasattr(kind, "__next__") or kind in _VIEW_TYPES)


_VIEW_TYPES = frozenset({type({}.keys()), type({}.values()), type({}.items()),
                         type(OrderedDict().keys()), type(OrderedDict().values()),
                         type(OrderedDict().items()), memoryview})


def _call_reading(tx: Transaction, f: Any, args: tuple, kwargs: dict,
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
    try:
        lazy = lazy or f in LAZY_CALLABLES
        deep = f in DEEP_READERS
    except TypeError:                             # an unhashable callable
        deep = False
    watched: list[int] = []
    if also is not None:
        tx.whole_read_allowed(also)
        watched.append(stripe_of_object(id(also)))
    replaced: dict = {}                 # argument index or keyword -> what the call gets
    for key, arg in _arguments(args, kwargs):
        kind = type(arg)
        if (kind in IMMUTABLE_TYPES and kind is not tuple) or id(arg) in tx.private:
            continue
        replacement = arg
        container = isinstance(arg, CONTAINER_TYPES)
        if container:
            if lazy or deep or id(arg) in tx.containers:
                # (a deep reader scans it before the call: a consistent copy)
                replacement = tx.read_shadow(arg)
            else:
                tx.whole_read_allowed(arg)
                watched.append(stripe_of_object(id(arg)))
        elif isinstance(arg, _FRAMES):
            # list(gen), sum(gen)...: the C code would resume a frame that
            # existed before the section, which cannot be rolled back.
            _inevitable(tx, "resuming a generator or coroutine from outside the section")
            return _call_direct(tx, original, args, kwargs)
        elif kind is not tuple:
            owner = _bound_container(arg)
            if owner is not None and id(owner) not in tx.private:
                replacement = getattr(tx.read_shadow(owner), arg.__name__)
        if deep and (container or kind is tuple) and not _record_nested(tx, replacement):
            _inevitable(tx, f"deep read by {policy.qualified_name(f)}")
            return _call_direct(tx, original, args, kwargs)
        if replacement is not arg:
            replaced[key] = replacement
    final_args, final_kwargs = args, kwargs
    if replaced:
        final_args = tuple(replaced.get(index, arg) for index, arg in enumerate(args))
        final_kwargs = {name: replaced.get(name, arg) for name, arg in kwargs.items()}
    if not watched:
        return f(*final_args, **final_kwargs)
    result = _read_window(tx, watched, f, final_args, final_kwargs)
    if not lazy and _is_lazy(result):
        # An iterator or view over a shared container: call again on copies.
        return _call_reading(tx, f, args, kwargs, also=None, lazy=True) if also is None else \
            _call_reading(tx, getattr(tx.read_shadow(also), f.__name__), args, kwargs, lazy=True,
                          original=f)
    return result


def _arguments(args: tuple, kwargs: dict) -> Any:
    """(index or keyword, value) for every positional and keyword argument."""
    yield from enumerate(args)
    if kwargs:
        yield from kwargs.items()


def _read_window(tx: Transaction, watched: list[int], f: Any, args: tuple, kwargs: dict) -> Any:
    """``f(*args, **kwargs)``, consistent with the snapshot for every stripe in ``watched``."""
    if len(watched) == 1:
        return tx.versioned(watched[0], _apply, f, args, kwargs)
    while True:
        before = [VERSIONS[stripe] for stripe in watched]
        stale = [s for s, v in zip(watched, before) if v > tx.rv]
        if stale:
            tx.extend(stale[0])
            continue
        try:
            result = f(*args, **kwargs)
        except Exception:
            if [VERSIONS[s] for s in watched] != before:
                continue
            tx.reads.update(watched)
            raise
        if [VERSIONS[s] for s in watched] == before:
            tx.reads.update(watched)
            return result


def _apply(f: Any, args: tuple, kwargs: dict) -> Any:
    return f(*args, **kwargs)


_class_policies: dict[type, policy.CallPolicy] = {}


def _class_policy(klass: type) -> policy.CallPolicy:
    """Calling a class defined by application code (or a builtin exception) is safe."""
    rule = _class_policies.get(klass)
    if rule is None:
        rule = policy.IRREVOCABLE
        if _class_is_safe(klass):
            fresh = klass.__new__ is object.__new__ or klass.__module__ == "builtins"
            rule = policy.PURE_FRESH if fresh else policy.PURE
        _class_policies[klass] = rule
    return rule


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


def _call_direct(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    """A call outside optimistic mode: in place, bumping the containers it mutates."""
    rule = policy.lookup(f)
    if rule.kind == "special":
        return rule.handler(tx, f, args, kwargs)
    if rule.kind == "mutates":
        owner = _bound_container(f)
        targets = [owner] if owner is not None and 0 in rule.writes else [
            args[i] for i in rule.writes if i < len(args)]
        shared = [t for t in targets if isinstance(t, CONTAINER_TYPES)
                  and (tx is None or id(t) not in tx.private)]
        if shared:
            return _direct_container_call(shared[0], f, args, kwargs, extra=shared[1:])
    return f(*args, **kwargs)


def _direct_container_call(target: Any, f: Any, args: tuple, kwargs: dict,
                           extra: list = ()) -> Any:
    """``f(*args)`` that mutates ``target`` in place, with all affected stripes bumped."""
    stripes = {stripe_of_object(id(t)) for t in (target, *extra)}
    if isinstance(target, dict):
        before = set(target)
        stripes.update(stripe_of_key(id(target), key) for key in before)

        def mutate() -> Any:
            result = f(*args, **kwargs)
            # Keys the call added are held (and later versioned) too.
            hold({stripe_of_key(id(target), key) for key in target if key not in before})
            return result
        return direct_write(stripes, mutate)
    return direct_write(stripes, f, *args, **kwargs) if not kwargs else direct_write(
        stripes, _apply, f, args, kwargs)


# -- special calls: builtins that act like barriers ------------------------------------

def _special_getattr(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    if kwargs or not 2 <= len(args) <= 3:
        return getattr(*args, **kwargs)         # the usual TypeError
    if type(args[1]) is not str:
        return getattr(*args)
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
    """``object.__setattr__(self, name, value)`` inside a custom ``__setattr__``."""
    if kwargs or len(args) != 3 or (tx is not None and id(args[0]) in tx.private):
        return f(*args, **kwargs)
    if tx is None or tx.inevitable:
        return direct_write((stripe_of_key(id(args[0]), args[1]),), f, *args)
    tx.write_attr(*args)


def _special_next(tx: Optional[Transaction], f: Any, args: tuple, kwargs: dict) -> Any:
    if (tx is not None and not tx.inevitable and args and isinstance(args[0], _FRAMES)
            and id(args[0]) not in tx.private):
        _inevitable(tx, "resuming a generator or coroutine from outside the section")
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
            d = f.__self__
            if tx is not None and id(d) in tx.private:
                return f(*args, **kwargs)
            if tx is None or tx.inevitable:
                return _direct_container_call(d, f, args, kwargs) if writes else f(*args, **kwargs)
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


for _obj, _handler in ((getattr, _special_getattr), (hasattr, _special_hasattr),
                       (setattr, _special_setattr), (delattr, _special_delattr),
                       (object.__setattr__, _special_object_setattr), (next, _special_next),
                       (dict.get, _special_dict_get), (dict.setdefault, _special_dict_setdefault),
                       (dict.pop, _special_dict_pop)):
    policy.register_special(_obj, _handler)
del _obj, _handler

# The C fast path replaces the hot barriers above when it loads (tornado_stm.stm.fastpath).
from tornado_stm.stm.fastpath import install as _install_fastpath  # noqa: E402
_install_fastpath(globals())
