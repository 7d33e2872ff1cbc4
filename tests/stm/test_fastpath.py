"""The C fast path of the barriers: it loads, keeps the GIL off, and behaves as the Python barriers.

The identity tests run each case twice, once through the pure-Python
barrier and once through the C one, each with its own fresh transaction,
and compare the outcome (result, or exception type and arguments) and
what the transaction recorded (read stripes, read count, private objects,
redo logs). The engine's own tests run with whichever backend the
environment selects; ``test_engine_tests_pass_with_the_other_backend``
runs a subset of them again with the other one.
"""

from __future__ import annotations

import collections
import heapq
import math
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path
from types import GeneratorType, ModuleType
from typing import Any, Callable

import pytest

from tornado_stm.stm import fastpath
from tornado_stm.stm.stats import for_current_thread
from tornado_stm.stm.txn import Transaction
from tornado_stm.stm.versions import stripe_of_key, stripe_of_object

ROOT = Path(__file__).resolve().parents[2]
FREE_THREADED_BUILD = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
USING_C = fastpath.BACKEND == "c"
needs_c = pytest.mark.skipif(not USING_C, reason=f"C fast path not in use: {fastpath.REASON}")


# -- the extension loads ------------------------------------------------------------

@pytest.mark.skipif(sys.implementation.name != "cpython", reason="CPython extension")
def test_the_extension_is_built_and_loads() -> None:
    from tornado_stm.stm import _fastpath
    assert callable(_fastpath.get_item)
    if not os.environ.get("TORNADO_STM_PURE") and not os.environ.get("TORNADO_STM_FAULTS"):
        assert fastpath.BACKEND == "c", fastpath.REASON


def _run(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("TORNADO_STM_PURE", "PYTHON_GIL", "TORNADO_STM_FAULTS")}
    environ.update(env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environ, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.skipif(not FREE_THREADED_BUILD, reason="needs a free-threaded CPython")
def test_importing_the_extension_keeps_the_gil_disabled() -> None:
    out = _run("""
        import sys, warnings
        warnings.simplefilter("error")          # re-enabling the GIL warns
        from tornado_stm.stm import _fastpath, barriers, fastpath
        print(fastpath.BACKEND, sys._is_gil_enabled())
    """)
    assert out == "c False"


def test_pure_python_is_forced_by_the_environment() -> None:
    out = _run("""
        from tornado_stm.stm import barriers, fastpath, txn
        import threading
        print(fastpath.BACKEND, type(barriers.get_item).__name__,
              isinstance(txn.CURRENT, threading.local))
    """, TORNADO_STM_PURE="1")
    assert out == "python function True"


@needs_c
def test_the_hot_barriers_are_the_c_ones() -> None:
    from tornado_stm.stm import barriers, txn
    from tornado_stm.instrument.hook import runtime_namespace
    for name in fastpath.HOT_BARRIERS:
        assert getattr(barriers, name) is fastpath.C[name]
        assert fastpath.PYTHON[name].__module__ == "tornado_stm.stm.barriers"
    assert runtime_namespace()["_stm_gi"] is fastpath.C["get_item"]
    assert type(txn.CURRENT).__name__ == "TxSlot"


@needs_c
def test_the_thread_slot_is_per_thread() -> None:
    import threading
    from tornado_stm.stm import txn
    seen = []
    txn.CURRENT.tx = "mine"
    try:
        thread = threading.Thread(target=lambda: seen.append(fastpath.C["current"]()))
        thread.start()
        thread.join()
        assert seen == [None]
        assert fastpath.C["current"]() == "mine" == fastpath.PYTHON["current"]()
        del txn.CURRENT.tx
        assert txn.CURRENT.tx is None
    finally:
        txn.CURRENT.tx = None


# -- identity of the C and Python barriers ------------------------------------------

class Thing:
    def __init__(self, value: Any = 1) -> None:
        self.value = value


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self) -> None:
        self.a = 1


class Seq:
    def __init__(self, items: list) -> None:
        self.items = items

    def __getitem__(self, index: int) -> Any:
        return self.items[index]


THING = Thing()
SLOTTED = Slotted()
LIST = [3, 1, 2]
DICT = {"a": 1, "b": 2}
SET = {1, 2}
TUPLE = (1, 2)
DEFAULTDICT = collections.defaultdict(int, {"a": 1})
NAMESPACE = {"present": 10}

# Instrumented code for the call cases: a function, a generator, a class.
APP_SOURCE = '''
def double(x):
    return 2 * x

def counting(n):
    for i in range(n):
        yield i

class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def norm1(self):
        return abs(self.x) + abs(self.y)
'''


def _app() -> ModuleType:
    from tornado_stm.instrument import compile_instrumented
    from tornado_stm.instrument.hook import prepare_namespace
    module = ModuleType("fastpath_app")
    prepare_namespace(module.__dict__)
    exec(compile_instrumented(APP_SOURCE, "<fastpath_app>"), module.__dict__)
    return module


APP = _app()
APP_POINT = APP.Point(3, -4)        # made outside any section: shared


def new_tx(kind: str) -> Transaction | None:
    if kind == "none":
        return None
    tx = Transaction(for_current_thread(), False, None)
    tx.inevitable = kind == "inev"
    return tx


def private(tx: Transaction | None, obj: Any) -> Any:
    if tx is not None:
        tx.private[id(obj)] = obj
    return obj


def labels(stripes: set[int], args: tuple) -> list:
    """Read stripes named by what they cover among the call's arguments (ids differ per run)."""
    named = []
    for stripe in stripes:
        names = set()
        for i, obj in enumerate(args):
            if stripe == stripe_of_object(id(obj)):
                names.add(("object", i))
            for j, key in enumerate(args):
                try:
                    if stripe == stripe_of_key(id(obj), key):
                        names.add(("key", i, j))
                except TypeError:
                    pass
        named.append(sorted(names) or "elsewhere")
    return sorted(named, key=repr)


def describe(value: Any) -> Any:
    """What to compare of a result: fresh objects differ in identity, not in content."""
    if isinstance(value, GeneratorType):
        return ("generator", value.gi_code.co_name)
    if isinstance(value, (Thing, APP.Point)):
        return (type(value).__name__, vars(value))
    if isinstance(value, BaseException):
        return (type(value).__name__, value.args)
    if isinstance(value, (range, type({}.items()))):
        return (type(value).__name__, list(value))
    return value


def state(tx: Transaction | None, args: tuple) -> Any:
    if tx is None:
        return None
    return {
        "reads": labels(tx.reads, args),
        "read_count": tx.read_count,
        "private": sorted(describe_private(o) for o in tx.private.values()),
        "attrs": sorted((type(obj).__name__, sorted(names.items(), key=repr))
                        for obj, names in tx.attrs.values()),
        "containers": sorted(repr((log.shadow, log.writes, log.dirty, log.whole))
                             for log in tx.containers.values()),
        "inevitable": tx.inevitable,
        "doomed": tx.doomed,
    }


def describe_private(obj: Any) -> str:
    return repr(describe(obj)) if not isinstance(obj, (list, dict, set)) else repr(obj)


def outcome(barrier: Callable, args: tuple, kwargs: dict) -> Any:
    try:
        return ("returned", describe(barrier(*args, **kwargs)))
    except Exception as exc:
        extra = getattr(exc, "name", None) if isinstance(exc, NameError) else None
        return ("raised", type(exc).__name__, exc.args, extra)


Case = Callable[[Transaction | None], tuple]   # tx -> (barrier name, args, kwargs, extra check)


def case(name: str, *args: Any, **kwargs: Any) -> Case:
    return lambda tx: (name, (tx, *args), kwargs, None)


def with_private(name: str, make: Callable[[], Any], *args: Any) -> Case:
    """The barrier applied to an object private to the section (made fresh per run)."""
    def build(tx: Transaction | None) -> tuple:
        obj = private(tx, make())
        return name, (tx, obj, *args), {}, lambda: describe(obj) if not isinstance(
            obj, (list, dict, set)) else repr(obj)
    return build


def with_fresh(name: str, make: Callable[[], Any], *args: Any) -> Case:
    """The barrier applied to a new shared object (writes in place must be compared on it)."""
    def build(tx: Transaction | None) -> tuple:
        obj = make()
        return name, (tx, obj, *args), {}, lambda: repr(describe(obj))
    return build


def logged_then(name: str, *args: Any) -> Case:
    """A read after the transaction logged a write to the same object (redo-log hit)."""
    def build(tx: Transaction | None) -> tuple:
        if tx is not None and not tx.inevitable:
            tx.write_attr(THING, "value", 99)
            tx.shadow_for_write(LIST)
            tx.write_dict_item(DICT, "a", 7)
        return name, (tx, *args), {}, None
    return build


def private_container_call(method: str, make: Callable[[], Any], *args: Any, **kwargs: Any) -> Case:
    def build(tx: Transaction | None) -> tuple:
        obj = private(tx, make())
        return "call", (tx, getattr(obj, method), *args), kwargs, lambda: repr(obj)
    return build


def call_with_private(f: Any, make: Callable[[], Any], *args: Any, shared: bool = False) -> Case:
    """``f(obj, *args)`` with obj new, private to the section unless ``shared``."""
    def build(tx: Transaction | None) -> tuple:
        obj = make() if shared else private(tx, make())
        return "call", (tx, f, obj, *args), {}, lambda: repr(describe(obj))
    return build


READS = {
    "attr plain": case("get_attr", THING, "value"),
    "attr slot": case("get_attr", SLOTTED, "a"),
    "attr unset slot": case("get_attr", SLOTTED, "b"),
    "attr unset slot default": case("get_attr", SLOTTED, "b", "dflt"),
    "attr missing": case("get_attr", THING, "missing"),
    "attr missing default": case("get_attr", THING, "missing", 42),
    "attr present default": case("get_attr", THING, "value", 42),
    "attr method": case("get_attr", THING, "__init__"),
    "attr of module": case("get_attr", math, "pi"),
    "attr missing in module": case("get_attr", math, "nope"),
    "attr missing in module default": case("get_attr", math, "nope", 0),
    "attr of immutable": case("get_attr", 5, "real"),
    "attr of str": case("get_attr", "abc", "upper"),
    "attr of class": case("get_attr", Thing, "__name__"),
    "attr name not str": case("get_attr", THING, 3),
    "attr too few args": case("get_attr", THING),
    "attr logged": logged_then("get_attr", THING, "value"),
    "attr private": with_private("get_attr", Thing, "value"),
    "item list": case("get_item", LIST, 1),
    "item list negative": case("get_item", LIST, -1),
    "item list out of range": case("get_item", LIST, 10),
    "item list slice": case("get_item", LIST, slice(0, 2)),
    "item list bad index": case("get_item", LIST, "x"),
    "item dict": case("get_item", DICT, "a"),
    "item dict missing": case("get_item", DICT, "zz"),
    "item dict unhashable": case("get_item", DICT, []),
    "item tuple": case("get_item", TUPLE, 0),
    "item str": case("get_item", "abc", 1),
    "item int": case("get_item", 5, 1),
    "item defaultdict": case("get_item", DEFAULTDICT, "a"),
    "item custom": case("get_item", Seq([1, 2]), 1),
    "item logged list": logged_then("get_item", LIST, 0),
    "item logged dict": logged_then("get_item", DICT, "a"),
    "item private": with_private("get_item", lambda: [5, 6], 1),
    "in list": case("contains", 1, LIST),
    "not in list": case("contains", 9, LIST),
    "in set": case("contains", 1, SET),
    "unhashable in set": case("contains", [], SET),
    "in dict": case("contains", "a", DICT),
    "not in dict": case("contains", "zz", DICT),
    "unhashable in dict": case("contains", [], DICT),
    "in tuple": case("contains", 1, TUPLE),
    "in str": case("contains", "b", "abc"),
    "in int": case("contains", 1, 5),
    "in logged list": logged_then("contains", 3, LIST),
    "in private": with_private("contains", lambda: {1: 2}, 1),
    "iterate list": case("iterate", LIST),
    "iterate dict": case("iterate", DICT),
    "iterate set": case("iterate", SET),
    "iterate tuple": case("iterate", TUPLE),
    "iterate range": case("iterate", range(3)),
    "iterate dict items": case("iterate", DICT.items()),
    "iterate custom": case("iterate", Seq([1])),
    "iterate logged list": logged_then("iterate", LIST),
    "iterate private": with_private("iterate", lambda: [1, 2]),
    "global": case("get_global", NAMESPACE, "present"),
    "global builtin": case("get_global", NAMESPACE, "len"),
    "global missing": case("get_global", NAMESPACE, "absent"),
    "global in a mapping": case("get_global", collections.OrderedDict(NAMESPACE), "present"),
    "new": case("new", [1, 2]),
    "current": lambda tx: ("current", (), {}, None),
    "view int": case("view", 3),
    "view tuple": case("view", TUPLE),
    "view shared list": case("view", LIST),
    "view logged list": logged_then("view", LIST),
    "view private": with_private("view", lambda: [1, 2]),
    "deep view tuple": case("deep_view", (LIST, 1)),
    "deep view shared dict": case("deep_view", DICT),
    "deep view str": case("deep_view", "abc"),
    "truth empty": case("truth", 0),
    "truth shared list": case("truth", LIST),
    "truth logged list": logged_then("truth", LIST),
    "truth custom": case("truth", Seq([])),
    "touch shared set": case("touch", SET),
    "touch int": case("touch", 0),
}

WRITES = {
    "set attr shared": case("set_attr", THING, "value", 5),
    "set attr private": with_private("set_attr", Thing, "value", 5),
    "set attr fresh shared": with_fresh("set_attr", Thing, "value", 6),
    "del attr private": with_private("del_attr", Thing, "value"),
    "del attr private missing": with_private("del_attr", Thing, "missing"),
    "del attr shared missing": case("del_attr", THING, "missing"),
    "set attr name not str": with_private("set_attr", Thing, 3, 5),
    "set item dict": case("set_item", DICT, "k", 1),
    "set item list": case("set_item", LIST, 0, 9),
    "set item fresh dict": with_fresh("set_item", dict, "k", 2),
    "set item private": with_private("set_item", dict, "k", 3),
    "set item private unhashable": with_private("set_item", dict, [], 3),
    "set item tuple": case("set_item", TUPLE, 0, 1),
    "del item private list": with_private("del_item", lambda: [1, 2], 0),
    "del item private missing": with_private("del_item", dict, "zz"),
    "del item dict missing": case("del_item", DICT, "zz"),
    "new private": with_private("new", list),
}

CALLS = {
    "builtin": case("call", abs, -3),
    "builtin raises": case("call", int, "x"),
    "builtin kwargs": case("call", int, "ff", base=16),
    "type": case("call", range, 2, 5),
    "fresh": case("call", list, (1, 2)),
    "fresh dict kwargs": case("call", dict, a=1),
    "module function": case("call", math.sqrt, 4.0),
    "shared arg": case("call", len, LIST),
    "private arg kwargs": call_with_private(sorted, lambda: [2, 3, 1]),
    "mutates private": call_with_private(heapq.heappush, lambda: [1, 5], 3),
    "mutates shared": case("call", heapq.heappush, LIST, 0),
    "mutates too few args": case("call", heapq.heappush),
    "pure of a generator from outside": call_with_private(sum, lambda: (i for i in range(3)),
                                                          shared=True),
    "pure of a private generator": call_with_private(sum, lambda: (i for i in range(3))),
    "private list append": private_container_call("append", list, 4),
    "private list sort kwargs": private_container_call("sort", lambda: [1, 3, 2], reverse=True),
    "private dict get": private_container_call("get", lambda: {"a": 1}, "a"),
    "private dict get default": private_container_call("get", dict, "a", 0),
    "private dict setdefault": private_container_call("setdefault", dict, "b", 2),
    "private dict pop": private_container_call("pop", lambda: {"a": 1}, "a"),
    "private dict pop missing": private_container_call("pop", dict, "a"),
    "shared list method": case("call", LIST.count, 3),
    "shared dict get": case("call", DICT.get, "a"),
    "str method": case("call", "a,b".split, ","),
    "instrumented": case("call", APP.double.__wrapped__, 4),
    "entry wrapper": case("call", APP.double, 5),
    "entry wrapper kwargs": case("call", APP.double, x=6),
    "instrumented generator": case("call", APP.counting, 3),
    "app class": case("call", APP.Point, 1, 2),
    "app class bad args": case("call", APP.Point, 1),
    "entry method": case("call", APP_POINT.norm1),
    "builtin exception class": case("call", ValueError, "bad"),
    "not callable": case("call", 5),
    "no function": case("call"),
}

ALL = {**READS, **WRITES, **CALLS}
#: Cases that, outside optimistic mode, would write the module's shared objects
#: in place; the "fresh" cases cover those modes on new objects.
IN_PLACE = {"set attr shared", "set item dict", "set item list", "mutates shared"}
WRITES["set item fresh list"] = with_fresh("set_item", lambda: [1, 2], 0, 9)
CALLS["mutates fresh shared"] = call_with_private(heapq.heappush, lambda: [1, 5], 3, shared=True)
ALL.update(WRITES)
ALL.update(CALLS)


@needs_c
@pytest.mark.parametrize("kind", ["opt", "none", "inev"])
@pytest.mark.parametrize("name", list(ALL))
def test_c_and_python_barriers_agree(name: str, kind: str) -> None:
    if name in IN_PLACE and kind != "opt":
        pytest.skip("writes shared objects in place; see the 'fresh' cases")
    build = ALL[name]
    results = []
    # Python first: the C path uses the caches (attribute kinds, call policies)
    # that the Python barriers fill, so the second run takes the C fast cases.
    for impl in (fastpath.PYTHON, fastpath.C):
        tx = new_tx(kind)
        barrier, args, kwargs, check = build(tx)
        if barrier == "current":
            args = ()
        try:
            got = outcome(impl[barrier], args, kwargs)
        finally:
            if tx is not None:
                tx.leave_w()                            # a case that became inevitable holds W
        results.append((got, state(tx, args[1:]), check() if check else None))
    assert results[1] == results[0]


@needs_c
def test_a_shared_write_then_read_sees_the_write_in_both() -> None:
    for impl in (fastpath.PYTHON, fastpath.C):
        tx = new_tx("opt")
        impl["set_item"](tx, DICT, "a", 100)
        impl["set_attr"](tx, THING, "value", 200)
        assert impl["get_item"](tx, DICT, "a") == 100
        assert impl["get_attr"](tx, THING, "value") == 200
        assert impl["contains"](tx, "a", DICT) is True
    assert DICT["a"] == 1 and THING.value == 1         # nothing published


@needs_c
def test_a_newer_version_extends_the_snapshot_or_aborts() -> None:
    from tornado_stm.stm.txn import AbortSection
    from tornado_stm.stm.versions import CLOCK, VERSIONS
    stripe = stripe_of_object(id(LIST))
    key_stripe = stripe_of_key(id(DICT), "b")
    saved = VERSIONS[stripe], VERSIONS[key_stripe], CLOCK[0]
    try:
        for impl in (fastpath.PYTHON, fastpath.C):
            tx = new_tx("opt")
            CLOCK[0] += 1
            VERSIONS[stripe] = CLOCK[0]                 # committed after the snapshot
            assert impl["get_item"](tx, LIST, 0) == 3   # nothing read yet: extended
            assert tx.rv == CLOCK[0]
            CLOCK[0] += 1
            VERSIONS[key_stripe] = VERSIONS[stripe] = CLOCK[0]
            with pytest.raises(AbortSection):           # LIST was read: conflict
                impl["get_item"](tx, DICT, "b")
    finally:
        VERSIONS[stripe], VERSIONS[key_stripe], CLOCK[0] = saved


@needs_c
def test_every_validate_every_reads_the_snapshot_is_checked() -> None:
    from tornado_stm.stm import txn
    from tornado_stm.stm.txn import AbortSection
    saved = txn.VALIDATE_EVERY[0]
    txn.VALIDATE_EVERY[0] = 3           # the list the C barriers hold, changed in place
    try:
        for impl in (fastpath.PYTHON, fastpath.C):
            tx = new_tx("opt")
            impl["get_item"](tx, LIST, 0)
            tx.doomed = AbortSection("test")
            impl["get_item"](tx, LIST, 1)
            with pytest.raises(AbortSection):
                impl["get_item"](tx, LIST, 2)               # the third read validates
            assert tx.read_count == 3
    finally:
        txn.VALIDATE_EVERY[0] = saved


@needs_c
def test_the_privacy_answer_follows_the_private_dict() -> None:
    """C keeps "is obj private?" per thread, keyed by the dict's version tag:
    an object made private, or no longer private, is answered anew."""
    tx = new_tx("opt")
    private(tx, [0])                    # a non-empty private dict: the cached path
    row = [1, 2]
    stripe = stripe_of_object(id(row))

    def read_is_versioned() -> bool:
        # A new read set each time: C remembers what it added to the last one.
        tx.reads = set()
        assert fastpath.C["get_item"](tx, row, 1) == 2
        return stripe in tx.reads

    assert read_is_versioned() and read_is_versioned()
    private(tx, row)
    assert not read_is_versioned() and not read_is_versioned()
    del tx.private[id(row)]
    assert read_is_versioned()
    tx.private.clear()
    private(tx, row)
    assert not read_is_versioned()


@needs_c
def test_deeply_private_tells_a_structure_the_section_built() -> None:
    """``deeply_private``: True only when every container reached is private
    and everything else is an immutable builtin; False (Python scans then)
    for a shared container, an instance, or a walk over its budget."""
    from tornado_stm.stm import _fastpath

    tx = new_tx("opt")
    shared_row = [7, 8]
    grid = private(tx, [private(tx, [0, 1, 2]) for _ in range(3)])
    state = private(tx, {"grid": grid, "size": (3, 3), "tags": frozenset({"a"}),
                         "names": private(tx, {"x", "y"}), "none": None})
    assert _fastpath.deeply_private(tx, state, 10_000) is True
    assert _fastpath.deeply_private(tx, (state, "s", 1.5), 10_000) is True
    assert _fastpath.deeply_private(tx, state, 5) is False          # over budget
    grid.append(shared_row)
    assert _fastpath.deeply_private(tx, state, 10_000) is False     # a shared row
    grid.pop()
    state["who"] = collections.Counter()                           # not a plain container
    assert _fastpath.deeply_private(tx, state, 10_000) is False
    del state["who"]
    state["key"] = (1, shared_row)                                 # inside a tuple
    assert _fastpath.deeply_private(tx, state, 10_000) is False
    assert _fastpath.deeply_private(tx, shared_row, 10_000) is False
    assert _fastpath.deeply_private(None, [], 10_000) is False      # no transaction: Python's


@needs_c
def test_a_read_set_gets_every_stripe_read_while_it_is_in_use() -> None:
    """C skips adding a stripe it added to the same set lately: every stripe
    read still ends up in the set, whatever set the transaction holds."""
    rows = [[i] for i in range(3000)]          # more rows than the filter's slots
    for attempt in range(3):
        tx = new_tx("opt")
        tx.reads = set()
        for _ in range(2):
            for row in rows:
                fastpath.C["get_item"](tx, row, 0)
        assert tx.reads == {stripe_of_object(id(row)) for row in rows}, attempt


# -- the engine's tests with the other backend ----------------------------------------

@pytest.mark.slow
def test_engine_tests_pass_with_the_other_backend() -> None:
    """This run uses one backend for tests/stm; a subset runs here with the other.

    (A fault-injection run uses the Python barriers: the subset runs with C, without faults.)
    """
    env = {k: v for k, v in os.environ.items()
           if k not in ("TORNADO_STM_PURE", "TORNADO_STM_FAULTS")}
    if USING_C:
        env["TORNADO_STM_PURE"] = "1"
    subset = ["tests/stm/test_semantics.py", "tests/stm/test_aborts.py",
              "tests/stm/test_inevitable.py", "tests/stm/test_invariants.py"]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *[s for s in subset if (ROOT / s).exists()]],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
