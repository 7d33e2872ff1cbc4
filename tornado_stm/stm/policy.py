"""The safe-call policy: what an atomic section may call without becoming inevitable.

Instrumented code is rolled back by the STM; uninstrumented code (C
functions, the standard library, Tornado) is not. Each uninstrumented
callable is classified by a *data table* that maps a dotted name to a
policy:

``pure``
    Reads its arguments (shallowly) and nothing else shared; safe to run
    again on retry. Shared lists, dicts and sets passed to it are read
    consistently (or replaced by the section's private copy).
``pure fresh``
    The same, and the result is a new object, private to the section.
``mutates 0,2``
    Writes the arguments at those positions (0 is ``self`` for methods).
    A written list, dict or set is replaced by the section's private copy
    before the call; any other written object makes the section
    inevitable first.
``deep``
    Reads deeply (``json.dumps`` of a shared structure, ``copy.deepcopy``):
    the section becomes inevitable first, so the call sees committed state.
``handoff``
    Hands its arguments, as they are, to a later transaction
    (``transaction.add``): called as is, never with the section's private
    copies of them.
``irrevocable``
    Anything else (I/O, ``self.write``, logging, unknown C code): the
    section becomes inevitable first. This is the default.

Keys are dotted names: ``"math.sqrt"``, ``"list.append"``,
``"tornado.web.RequestHandler.get_argument"``. ``"math.*"`` covers every
callable of a module or every method of a type. Names are resolved to
objects lazily; a name whose module is not installed is ignored.

Users extend the table in code with :func:`register` or with a TOML file
named by ``$TORNADO_STM_POLICY`` (read by :func:`tornado_stm.stm.start`)
or passed to :func:`load_file`::

    [calls]
    "mypkg.fastlib.checksum" = "pure"
    "mypkg.fastlib.Buffer.push" = "mutates 0"
"""

from __future__ import annotations

import builtins
import importlib
import logging
import os
import re
import threading
import tomllib
from dataclasses import dataclass
from types import (BuiltinFunctionType, FunctionType, MethodDescriptorType, MethodType,
                   MethodWrapperType, ModuleType, WrapperDescriptorType)
from typing import Callable, Optional

from tornado_stm.stm.settings import SettingError
from tornado_stm.stm.threadcopies import ThreadCopies

logger = logging.getLogger(__name__)

KINDS = ("pure", "mutates", "deep", "handoff", "irrevocable", "special")


@dataclass(frozen=True, slots=True)
class CallPolicy:
    """How a section may call one uninstrumented callable.

    (Slots: the C call barrier reads ``kind``, ``writes`` and ``fresh`` at
    their offsets, not through a dict.)"""

    kind: str
    writes: tuple[int, ...] = ()
    fresh: bool = False
    #: For ``special``: ``handler(tx, f, args, kwargs)`` does the call itself.
    handler: Optional[Callable] = None


PURE = CallPolicy("pure")
PURE_FRESH = CallPolicy("pure", fresh=True)
IRREVOCABLE = CallPolicy("irrevocable")


class PolicyError(SettingError):
    """A policy entry that cannot be understood."""


def parse(spec: str) -> CallPolicy:
    """``"mutates 0,1"`` -> ``CallPolicy("mutates", (0, 1))``; see the module docstring."""
    words = spec.replace(",", " ").split()
    if not words or words[0] not in KINDS or words[0] == "special":
        raise PolicyError(f"policy {spec!r}: expected pure, pure fresh, mutates N[,M], "
                          f"deep, handoff or irrevocable")
    kind, rest = words[0], words[1:]
    fresh = "fresh" in rest
    numbers = [w for w in rest if w != "fresh"]
    try:
        writes = tuple(int(w) for w in numbers)
    except ValueError:
        raise PolicyError(f"policy {spec!r}: argument positions must be integers") from None
    if kind == "mutates" and not writes:
        raise PolicyError(f"policy {spec!r}: 'mutates' needs the positions it writes")
    if kind != "mutates" and writes:
        raise PolicyError(f"policy {spec!r}: only 'mutates' takes argument positions")
    return CallPolicy(kind, writes, fresh)


def _words(kind: str, names: str) -> dict[str, str]:
    return {name: kind for name in names.split()}


# -- the shipped table ----------------------------------------------------

# __init__ called again on an existing object (list.__init__(L, items),
# S.__init__()) empties and refills it: a mutator like clear() + extend().
_LIST_MUTATORS = ("append extend insert remove pop clear sort reverse __setitem__ __delitem__ "
                  "__iadd__ __imul__ __init__")
_DICT_MUTATORS = "update clear popitem __setitem__ __delitem__ __ior__ __init__"
_SET_MUTATORS = ("add discard remove pop clear update difference_update intersection_update "
                 "symmetric_difference_update __ior__ __iand__ __isub__ __ixor__ __init__")

SHIPPED: dict[str, str] = {
    # builtins: constructors give fresh objects; the rest only read.
    **_words("pure fresh", "builtins.list builtins.dict builtins.set builtins.bytearray "
             "builtins.sorted builtins.object"),
    **_words("pure", "builtins.abs builtins.all builtins.any builtins.ascii builtins.bin "
             "builtins.bool builtins.bytes builtins.callable builtins.chr builtins.complex "
             "builtins.divmod builtins.float builtins.format "
             "builtins.frozenset builtins.hash builtins.hex builtins.id builtins.int "
             "builtins.isinstance builtins.issubclass builtins.len "
             "builtins.max builtins.min builtins.oct builtins.ord builtins.pow builtins.range "
             "builtins.repr builtins.round builtins.slice builtins.str "
             "builtins.sum builtins.tuple builtins.type builtins.memoryview"),
    # Lazy builtins: a new iterator, private to the section that made it (a
    # shared iterator is advanced only inevitably: see barriers.iterate).
    **_words("pure fresh", "builtins.enumerate builtins.filter builtins.map builtins.reversed "
             "builtins.zip"),
    **_words("deep", "builtins.vars builtins.dir json.dumps copy.deepcopy pickle.dumps"),
    # Exceptions and plain objects: their methods touch only the object itself
    # (typically just built by the section): super().__init__(...) stays optimistic.
    "BaseException.*": "pure", "object.__init__": "pure",
    # ... but these change the exception in place (its notes, its traceback).
    **_words("mutates 0", "BaseException.add_note BaseException.with_traceback "
             "BaseException.__setstate__"),
    # Immutable types: every method only reads.
    **_words("pure", "str.* bytes.* int.* float.* tuple.* frozenset.* complex.* bool.* range.*"),
    "math.*": "pure", "cmath.*": "pure", "operator.*": "pure", "_operator.*": "pure",
    **_words("mutates 0", "operator.setitem operator.delitem operator.iadd operator.iand "
             "operator.iconcat operator.ior operator.isub operator.ixor operator.imul"),
    "itertools.*": "pure fresh",
    **_words("mutates 0", "heapq.heappush heapq.heappop heapq.heapify heapq.heapreplace "
             "heapq.heappushpop"),
    **_words("pure", "heapq.nlargest heapq.nsmallest heapq.merge bisect.bisect "
             "bisect.bisect_left bisect.bisect_right"),
    **_words("mutates 0", "bisect.insort bisect.insort_left bisect.insort_right"),
    # list / dict / set methods (dict.get, setdefault and pop are "special":
    # they are routed to the per-key barriers by tornado_stm.stm.txn).
    "list.*": "pure",
    **_words("mutates 0", " ".join("list." + m for m in _LIST_MUTATORS.split())),
    "list.copy": "pure fresh",
    "dict.*": "pure",
    **_words("mutates 0", " ".join("dict." + m for m in _DICT_MUTATORS.split())),
    "dict.copy": "pure fresh", "dict.fromkeys": "pure fresh",
    "set.*": "pure",
    **_words("mutates 0", " ".join("set." + m for m in _SET_MUTATORS.split())),
    **_words("pure fresh", "set.copy set.union set.intersection set.difference "
             "set.symmetric_difference"),
    # hashlib: constructors give fresh hash objects.
    **_words("pure fresh", "hashlib.new hashlib.md5 hashlib.sha1 hashlib.sha224 hashlib.sha256 "
             "hashlib.sha384 hashlib.sha512 hashlib.blake2b hashlib.blake2s _hashlib.HASH.copy"),
    **_words("pure", "_hashlib.HASH.hexdigest _hashlib.HASH.digest"),
    "_hashlib.HASH.update": "mutates 0",
    # time: the clocks are specials (tornado_stm.stm.specials), read in
    # place and ordered as the sections commit.
    # random: every draw advances the generator's state, which an aborted
    # attempt must not have consumed (a seeded stream would differ from any
    # serial run's): in place on a generator the section made, inevitable
    # on a shared one, the module's functions included (they draw from one
    # shared generator).
    **_words("mutates 0", "random.random random.randint random.randrange random.choice "
             "random.choices random.uniform random.gauss random.sample random.getrandbits "
             "random.Random.random random.Random.randint random.Random.randrange "
             "random.Random.choice random.Random.choices random.Random.uniform "
             "random.Random.gauss random.Random.sample random.Random.getrandbits"),
    # shuffle also permutes the list it is given, in place (position 1;
    # "random.shuffle" names Random.shuffle, the method of every generator).
    **_words("mutates 0,1", "random.shuffle"),
    "random.Random": "pure fresh",
    **_words("pure fresh", "json.loads copy.copy collections.deque collections.OrderedDict "
             "collections.defaultdict collections.Counter"),
    # collections types, entry by entry for the class that defines each
    # method (their dict/list-like methods are the types' own).
    "collections.deque.*": "pure",
    **_words("mutates 0", " ".join("collections.deque." + m for m in (
        "append appendleft extend extendleft pop popleft remove rotate clear insert reverse "
        "__setitem__ __delitem__ __iadd__ __imul__ __init__").split())),
    "collections.deque.copy": "pure fresh",
    "collections.OrderedDict.*": "pure",
    **_words("mutates 0", " ".join("collections.OrderedDict." + m for m in (
        "popitem pop setdefault move_to_end update clear __setitem__ __delitem__ __ior__ "
        "__init__")
        .split())),
    **_words("pure fresh", "collections.OrderedDict.copy collections.OrderedDict.fromkeys"),
    **_words("mutates 0", "collections.Counter.update collections.Counter.subtract "
             "collections.Counter.__init__ collections.defaultdict.__init__ "
             "collections.Counter.__iadd__ collections.Counter.__isub__ "
             "collections.Counter.__ior__ collections.Counter.__iand__"),
    **_words("pure", "collections.Counter.most_common collections.Counter.elements "
             "collections.Counter.total collections.Counter.__missing__ "
             "collections.Counter.__eq__ collections.Counter.__ne__ collections.Counter.__le__ "
             "collections.Counter.__lt__ collections.Counter.__ge__ collections.Counter.__gt__ "
             "collections.Counter.__repr__ collections.Counter.__reduce__"),
    **_words("pure fresh", "collections.Counter.copy collections.Counter.__add__ "
             "collections.Counter.__sub__ collections.Counter.__or__ "
             "collections.Counter.__and__ collections.Counter.__pos__ "
             "collections.Counter.__neg__ collections.Counter.fromkeys"),
    **_words("pure fresh", "collections.defaultdict.copy collections.defaultdict.__copy__"),
    # Tornado: the read-only getters of a request handler and its request.
    **_words("pure", "tornado.web.RequestHandler.get_argument "
             "tornado.web.RequestHandler.get_arguments "
             "tornado.web.RequestHandler.get_query_argument "
             "tornado.web.RequestHandler.get_query_arguments "
             "tornado.web.RequestHandler.get_body_argument "
             "tornado.web.RequestHandler.get_body_arguments "
             "tornado.web.RequestHandler.decode_argument "
             "tornado.web.RequestHandler.get_cookie "
             "tornado.web.RequestHandler.get_signed_cookie "
             "tornado.web.RequestHandler.get_secure_cookie "
             "tornado.web.RequestHandler.get_signed_cookie_key_version "
             "tornado.web.RequestHandler.get_secure_cookie_key_version "
             "tornado.web.RequestHandler.get_status "
             "tornado.web.RequestHandler.settings "
             "tornado.web.RequestHandler.reverse_url "
             "tornado.httputil.HTTPServerRequest.full_url "
             "tornado.httputil.HTTPServerRequest.request_time "
             "tornado.httputil.HTTPServerRequest.cookies "
             "tornado.httputil.HTTPHeaders.__getitem__ tornado.httputil.HTTPHeaders.get "
             "tornado.httputil.HTTPHeaders.get_list tornado.httputil.HTTPHeaders.__contains__"),
    # The calling thread's running event loop and task. (IOLoop.current() and
    # asyncio.get_event_loop() may make a loop: tornado_stm.loop.scheduling
    # gives them their policy.)
    **_words("pure", "asyncio.get_running_loop asyncio.current_task"),
    # The transaction module's own small built-ins, and add(): its arguments
    # go to a later transaction as they are.
    **_words("pure", "tornado_stm.transaction.time tornado_stm.transaction.clock "
             "tornado_stm.transaction.count tornado_stm.transaction.is_atomic "
             "tornado_stm.transaction.getsegmentlimit tornado_stm.transaction.hint_commit_soon "
             "tornado_stm.transaction.threadlocalproperty.__get__ "
             "tornado_stm.transaction.threadlocalproperty.__set__ "
             "tornado_stm.transaction.stmiddict.__getitem__ "
             "tornado_stm.transaction.stmiddict.__contains__ "
             "tornado_stm.transaction.stmiddict.get tornado_stm.transaction.stmiddict.keys "
             "tornado_stm.transaction.stmiddict.values tornado_stm.transaction.stmiddict.items "
             "tornado_stm.transaction.stmidset.__contains__ "
             "tornado_stm.transaction.stmidset.__len__"),
    **_words("handoff", "tornado_stm.transaction.add tornado_stm.transaction.TransactionQueue.add "
             "tornado_stm.transaction.TransactionQueue.add_generator"),
}

# -- resolution -------------------------------------------------------------

_lock = threading.RLock()
_names: dict[str, CallPolicy] = {}          # the table, by dotted name
_unresolved: set[str] = set()               # names not turned into objects yet
_by_object: dict[object, CallPolicy] = {}   # resolved table entries, by normalized key
_wildcards: dict[str, CallPolicy] = {}      # "math" -> policy for "math.*"
LOOKUP_CACHE: dict[object, CallPolicy] = {}       # lookup results
_specials: dict[object, CallPolicy] = {}    # engine-provided handlers, by object


def register(name: str, spec: "str | CallPolicy") -> None:
    """Add or replace one entry, e.g. ``register("mylib.crc", "pure")``."""
    policy = spec if isinstance(spec, CallPolicy) else parse(spec)
    with _lock:
        if name.endswith(".*"):
            _wildcards[name[:-2]] = policy
        else:
            _names[name] = policy
            _unresolved.add(name)
        LOOKUP_CACHE.clear()


def register_special(obj: object, handler: Callable) -> None:
    """The engine's own handlers (getattr, dict.get...): ``handler(tx, f, args, kwargs)``."""
    with _lock:
        _specials[normalize(obj)] = CallPolicy("special", handler=handler)
        LOOKUP_CACHE.clear()


def load_file(path: str) -> int:
    """Load ``[calls]`` entries from a TOML file; returns how many were read."""
    try:
        with open(path, "rb") as stream:
            data = tomllib.load(stream)
    except OSError as exc:
        raise PolicyError(f"policy file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"policy file {path}: not valid TOML ({exc})") from None
    calls = data.get("calls")
    if not isinstance(calls, dict):
        raise PolicyError(f"policy file {path}: expected a [calls] table")
    for name, spec in calls.items():
        if not isinstance(spec, str):
            raise PolicyError(f"policy file {path}: {name!r} must map to a string")
        try:
            register(name, spec)
        except PolicyError as exc:
            raise PolicyError(f"policy file {path}: {name!r}: {exc}") from None
    return len(calls)


def _resolve_name(name: str) -> Optional[object]:
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = (obj.__dict__[attr] if isinstance(obj, type) and attr in obj.__dict__
                       else getattr(obj, attr))
        except AttributeError:
            return None
        return obj
    obj = builtins                              # "list.append" names a builtin type's method
    for attr in parts:
        obj = getattr(obj, attr, None)
        if obj is None:
            return None
    return obj


#: A bound C method that knows its defining class (``METH_METHOD``: a
#: compiled pattern's ``sub``, an asyncio future's ``add_done_callback`` on
#: 3.13): a subtype of the bound C methods' type.
BOUND_C_METHOD_TYPE = type(re.compile("").sub)


def normalize(f: object) -> object:
    """The key under which a callable's policy is kept.

    Bound methods map to their function (or to their type's method
    descriptor for C methods), properties to their getter, so that
    ``lst.append`` and ``list.append`` share an entry.
    """
    kind = type(f)
    if kind is BuiltinFunctionType or kind is BOUND_C_METHOD_TYPE:
        owner = f.__self__
        if owner is None or type(owner) is ModuleType:
            return f
        if isinstance(owner, type):          # a classmethod of a C type
            return (owner, f.__name__)
        return _descriptor(type(owner), f.__name__)
    if kind is MethodType:
        return normalize(f.__func__)
    if kind is MethodWrapperType:        # the class that defines the slot (super() may skip some)
        return _descriptor(getattr(f, "__objclass__", type(f.__self__)), f.__name__)
    if kind is property:
        return f.fget
    if kind in (staticmethod, classmethod):
        return f.__func__
    return f


#: (class, name) -> what the class's MRO holds under name, per thread (threadcopies).
_descriptors = ThreadCopies()


def _descriptor(owner: type, name: str) -> object:
    key = (owner, name)
    descriptors = _descriptors.of("descriptors")
    found = descriptors.get(key)
    if found is None:
        found = key
        for klass in owner.__mro__:
            if name in klass.__dict__:
                found = klass.__dict__[name]
                break
        descriptors[key] = found
    return found


def _resolve_pending() -> None:
    with _lock:
        for name in list(_unresolved):
            obj = _resolve_name(name)
            if obj is not None:
                try:
                    _by_object[normalize(obj)] = _names[name]
                except TypeError:
                    logger.debug("policy entry %s is not hashable; ignored", name)
            _unresolved.discard(name)


def _wildcard_for(f: object) -> Optional[CallPolicy]:
    if not _wildcards:
        return None
    kind = type(f)
    if kind is BuiltinFunctionType and (f.__self__ is None or type(f.__self__) is ModuleType):
        return _wildcards.get(f.__module__ or "")
    if isinstance(f, type):
        return _wildcards.get(f.__module__)
    if kind in (MethodDescriptorType, WrapperDescriptorType, MethodWrapperType):
        owner = getattr(f, "__objclass__", None) or type(f.__self__)
    elif kind in (BuiltinFunctionType, MethodType):
        owner = type(f.__self__)
    else:
        return None
    # The entry of the class that *defines* the method, never of a base that
    # merely has a method of the same name: OrderedDict.popitem is not
    # dict.popitem, and "dict.*" must not make it pure. A slot wrapper names
    # its class in its qualified name (super().__init__ is "Exception.__init__").
    name = getattr(f, "__name__", "")
    defining = getattr(f, "__qualname__", "").rpartition(".")[0]
    candidates = [klass for klass in owner.__mro__ if name in klass.__dict__]
    start = next((i for i, klass in enumerate(candidates) if klass.__qualname__ == defining), 0)
    # Builtin classes re-wrap their bases' slots (Exception.__init__ is
    # BaseException's): between builtins, a base's entry still applies.
    for klass in candidates[start:]:
        policy = _wildcards.get(_type_name(klass))
        if policy is not None or klass.__module__ != "builtins":
            return policy
    return None


def _type_name(klass: type) -> str:
    return klass.__qualname__ if klass.__module__ == "builtins" else f"{klass.__module__}.{klass.__qualname__}"


def lookup(f: object, default: CallPolicy = IRREVOCABLE) -> CallPolicy:
    """The policy of callable ``f`` (``default`` when the table does not know it)."""
    key = normalize(f)
    try:
        return LOOKUP_CACHE[key]
    except KeyError:
        pass
    except TypeError:                         # an unhashable callable object
        return default
    if _unresolved:
        _resolve_pending()
    policy = _specials.get(key) or _by_object.get(key) or _wildcard_for(f) or default
    if _lives_as_long_as_its_code(key):
        with _lock:
            LOOKUP_CACHE[key] = policy
    return policy


#: Keys that stand for code, not for objects a program makes as it runs.
_CODE_KINDS = (BuiltinFunctionType, MethodDescriptorType, WrapperDescriptorType, type, tuple)


def _lives_as_long_as_its_code(key: object) -> bool:
    """True for a key the cache may keep for ever: a C function or method, a
    class, a function defined at the top of a module or class. Not a
    callable object, a ``functools.partial`` or a closure made per call: the
    cache would keep each one, and everything it holds, alive for good."""
    if isinstance(key, _CODE_KINDS):
        return True
    return type(key) is FunctionType and "<locals>" not in key.__qualname__ \
        and key.__name__ != "<lambda>"


def qualified_name(f: object) -> str:
    """A readable dotted name of a callable, for statistics and errors."""
    key = normalize(f)
    if isinstance(key, tuple):
        return f"{_type_name(key[0])}.{key[1]}"
    owner = getattr(key, "__objclass__", None)
    if isinstance(owner, type):
        return f"{_type_name(owner)}.{getattr(key, '__name__', '?')}"
    if isinstance(key, type):
        return _type_name(key)
    module = getattr(key, "__module__", None) or "?"
    name = getattr(key, "__qualname__", None) or getattr(key, "__name__", None) or type(key).__name__
    return f"{module}.{name}"


for _name, _spec in SHIPPED.items():
    register(_name, _spec)
def load_from_environment() -> int:
    """Load the TOML file ``$TORNADO_STM_POLICY`` names, if any; how many entries it had."""
    path = os.environ.get("TORNADO_STM_POLICY")
    return load_file(path) if path else 0
