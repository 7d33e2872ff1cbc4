"""The transaction descriptor: one attempt of one atomic section.

This docstring is the one statement of the engine's protocol; the other
modules refer to it. The protocol is in the style of TL2 (Dice, Shalev,
Shavit 2006) with TinySTM's snapshot extension:

*Begin.* A transaction reads the global clock into ``rv``, its snapshot.

*Read.* To read a shared location it reads the location's stripe version
(``tornado_stm.stm.versions``), the value, and the version again. The
value is accepted if both versions agree and are not newer than ``rv``;
the stripe joins the read set. A newer version means someone committed
since the snapshot: the transaction tries to *extend* the snapshot to
the current clock, which is allowed when nothing it has read so far has
changed; otherwise it aborts. So every value a transaction sees belongs
to one consistent snapshot (opacity): application code never sees a
torn state through the barriers.

*Write.* Writes go to a private redo log and are never visible to other
threads before commit. Attributes are logged per (object, name). A dict
is logged per key until an operation needs the whole dict (``len``,
iteration, ``update``...), then it gets a private copy. Lists and sets
get a private copy on first write (copy-on-first-write). The
transaction's own reads see its own writes. Objects created inside the
section are *private*: they are not tracked or copied at all.

*Commit.* A transaction with writes takes the world lock W, validates its
read set (every stripe still no newer than ``rv``), then, in this order:
stores ``LOCKED`` in the stripes it writes (``versions.lock_stripes``),
publishes its redo log in place, and only then bumps the clock and gives
the stripes the new clock value (``versions.release_stripes``). A reader
that sees a stripe's new version therefore sees the published value, and
a reader that read the old value sees ``LOCKED`` or a version newer than
its snapshot when it checks the stripe again.
Read-only transactions commit without W, but still validate: some reads
(operators and uninstrumented functions given a shared container) are
checked only after the fact, and what a read-only section hands on (a
response, ``transaction.add``) must come from one consistent state.

*Abort.* Raising :class:`AbortSection` unwinds the application code; the
section runner drops the redo log and starts the call again.

*Inevitability.* Before something that cannot be rolled back, the
transaction takes W, validates (or aborts), publishes its redo log and
keeps W to the end. From then on it writes in place and it never aborts.
Every stripe it publishes at that turn or writes in place after it stays
*locked* until the section ends (:func:`release_held`), so an optimistic
reader can never see one of its writes without the others: it waits, or
aborts, and sees all of them after. Objects the section created before
becoming inevitable stop being private then, since publishing made them
reachable (but only through stripes it holds: the rewriter's fresh locals
go on filling them without barriers, unseen). Threads running plain
application code (not sections) borrow its W for their in-place writes
(``WorldLock.open_to_plain_code``): a section waiting for such a thread
would otherwise wait for ever.

*Direct mode.* Instrumented code running outside any section (a coroutine
step driven by the event loop) writes in place under W the same way; its
stripes are released when the thread gives W up. A step takes W at its
first barrier that may touch shared state, not at its start
(``section._step``, :func:`take_w_for_step`): what it ran before touched
only its own objects.

*Locks and their order.* W (``worldlock.WORLD_LOCK``) is the one lock
of the engine: every commit, every inevitable section, every in-place
write and every change of the clock happens under it, so the clock and
the version table need no atomic instructions. Any other lock is taken
after W, never the other way round: the shared event loop's
``_idle_mutex`` (a thread parks while holding the mutex and releases W
inside it, then takes W again only after leaving it), the log's and the
policy table's locks, the per-thread loops' balancer lock. A thread
waiting for W holds none of them.

*Clock readings.* The clocks of the ``time`` module are read in place,
never a conflict, but a serial run reads each clock in the order its
sections run: a section whose reading is below one a section committed
before it made aborts at its commit (:meth:`Transaction.read_clock`).
Readings are kept per clock, in nanoseconds (``time.time`` and
``time.time_ns`` read one), and a hold of W that ran code in place enters a reading of now for
every clock in use when it ends (:func:`enter_clocks_read_in_place`):
library code reads clocks the special never sees. Two sections reading
one clock side by side may commit in the other order: the first reader
then goes *before* the second in the serial order if they are independent
(:func:`place_before_later_readers`, over :data:`COMMITTED_ORDER`, the
order kept while clock readers run), and aborts otherwise. So that it
rarely aborts, a section about to commit waits (briefly, without W) for
the earlier readers it conflicts with so far
(:meth:`Transaction.wait_for_earlier_clock_readers`): the commits then come
in the order of the readings, as in a serial run.

*Read shadows.* A shared container handed to code that reads it later
(a lazy iterator, a ``for`` loop, a dict view) is given a private copy,
read consistently once: the *read shadow*. The section's later writes go
to the same copy, so the lazy reader sees them, as in a serial run. A
shadow that was never written is not published.
"""

from __future__ import annotations

import collections
import copy
import itertools
import operator
import sys
import threading
import time
import types
import weakref
from collections import Counter, OrderedDict, deque
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional

from tornado_stm.stm import faults
from tornado_stm.stm import log as stmlog
from tornado_stm.stm.extension import thread_slot
from tornado_stm.stm.registry import INSTRUMENTED_CODES, python_methods
from tornado_stm.stm.stats import ThreadStats
from tornado_stm.stm.versions import (CLOCK, LOCKED, RESHAPE_STRIPE, VERSIONS, lock_stripes,
                                      release_stripes, stripe_of_key, stripe_of_object)
from tornado_stm.stm.worldlock import WORLD_LOCK

#: How many times a reader waits for a stripe being committed before aborting.
LOCKED_SPINS = 2000
#: Every this many versioned reads, a transaction re-validates its read set:
#: ``VALIDATE_EVERY[0]``, in a one-element list (as ``versions.CLOCK``) so
#: that the C barriers, which hold the list, see a change too.
VALIDATE_EVERY: list[int] = [1024]

#: Debug switches that break the engine on purpose, so that tests can show
#: that they would catch a broken STM. Never set them in real use.
BROKEN_FOR_TESTS = {"skip_validation": False}

#: ``defaultdict`` factories that C code may call on a section's copy: no effects.
_FACTORIES_WITHOUT_EFFECTS = frozenset({int, float, complex, str, bytes, bool, list, dict, set,
                                        tuple, frozenset, deque, OrderedDict, Counter,
                                        collections.defaultdict})

#: The value of a deleted attribute or key in a redo log.
DELETED = object()

#: The shared containers the engine logs as wholes (subclasses included:
#: OrderedDict, Counter and defaultdict are dicts).
CONTAINER_TYPES = (list, dict, set, deque)

#: Containers that a thread must not read as a whole (iterate, copy) while
#: another changes them: on free-threaded CPython 3.13 an OrderedDict
#: iterated during a concurrent clear() crashes the interpreter (list,
#: dict, set and deque lock themselves). Their per-key reads are safe.
UNSAFE_WHOLE_READS: tuple = ((OrderedDict,) if hasattr(sys, "_is_gil_enabled")
                             and not sys._is_gil_enabled() else ())


#: Names a subclass of a container may define without changing how its
#: contents are read, copied and written (everything else may).
_HARMLESS_IN_SUBCLASSES = frozenset({
    "__init__", "__new__", "__repr__", "__str__", "__format__", "__init_subclass__",
    "__class_getitem__", "__doc__", "__module__", "__dict__", "__weakref__", "__slots__",
    "__qualname__", "__annotations__", "__firstlineno__", "__static_attributes__",
    "__orig_bases__", "__parameters__"})
_shadowable: dict[type, bool] = {}


def shadowable(kind: type) -> bool:
    """True when a private copy of a ``kind`` container behaves as the original would.

    The redo log copies a shared container (``copy.copy``) and replays the
    section's operations on the copy, then on the original at commit. That
    is right for list, dict, set, deque and the ``collections`` types; a
    subclass of the application's that overrides what a copy or an
    operation runs (``__setitem__`` calling ``super()``, ``__missing__``
    storing into ``self``) would run its code on the copy, or twice, or
    never on the original: a section touching one runs inevitably instead.
    """
    answer = _shadowable.get(kind)
    if answer is None:
        answer = True
        for klass in kind.__mro__:
            if klass.__module__ in ("builtins", "collections"):
                continue
            if any(name not in _HARMLESS_IN_SUBCLASSES and (
                    name == "__missing__" or any(hasattr(base, name) for base in CONTAINER_TYPES))
                   for name in vars(klass)):
                answer = False
                break
        _shadowable[kind] = answer
    return answer


#: Why a section runs again inevitably when its private copy is still held.
COPY_KEPT = "an iterator or view over the section's copy of a shared container is kept"
#: sys.getrefcount of a copy that only its log holds, seen from check_copies_kept.
_COPY_REFERENCES = 3


class AbortSection(BaseException):
    """Unwinds an atomic section so it can be retried.

    It derives from BaseException so that application code catching
    ``Exception`` does not swallow it.
    """

    def __init__(self, cause: str, marker: bytes = b"", inevitable: bool = False) -> None:
        super().__init__(cause)
        self.cause = cause
        self.marker = marker
        #: Run the next attempt inevitably from its start (``cause`` says why).
        self.inevitable = inevitable


class _Local(threading.local):
    tx: Optional["Transaction"] = None
    step: Optional[Callable[[], None]] = None


#: This thread's transaction, in ``CURRENT.tx`` (None outside sections): a
#: C per-thread slot when the barriers' C fast path is in use, else a _Local.
CURRENT = thread_slot(_Local)

#: Where the last commit that wrote each stripe did so (only with a log).
_writer_markers: dict[int, bytes] = {}


class BarriersAbove:
    """The barriers that code of this layer and of :mod:`.calls` hands work
    back to: a ``defaultdict``'s factory goes through the call barrier, an
    application key function's results through ``deep_view``.
    :mod:`.barriers` sits above both and imports them, so they cannot
    import it: it enters its barriers here when it is loaded, and
    :func:`tornado_stm.stm.start` enters the ones in use (the C ones, once
    installed)."""

    call: Callable[..., Any]
    deep_view: Callable[..., Any]


BARRIERS_ABOVE = BarriersAbove()


def current() -> Optional["Transaction"]:
    """The transaction running on this thread, or None outside sections."""
    return CURRENT.tx


#: True once the C barriers are installed: every barrier (or the Python one it
#: hands over to) calls take_w_for_step in direct mode, so a step may run
#: without W until its first barrier (section._step). The pure-Python hot
#: barriers do not check: without the C fast path a step takes W at its start.
BARRIERS_CHECK_STEPS = [False]


class _ModuleBody(threading.local):
    """Per thread: how deep in plain code of the application it runs (a module's
    top level, a thread the application started: ``section.module_body``)."""

    depth = 0
    #: True while this thread waits in ``transaction.run()`` (beside_the_workers).
    waiting = False


MODULE_BODY = _ModuleBody()


def take_w_for_step() -> None:
    """Called by a barrier about to act in direct mode (no transaction): a
    coroutine or generator step that has run without W so far
    (``section._step``) takes it now, for the rest of the step."""
    take = CURRENT.step
    if take is not None:
        take()


class ContainerLog:
    """The redo log of one shared list, set, dict or deque."""

    __slots__ = ("real", "shadow", "writes", "dirty", "whole")

    def __init__(self, real: Any) -> None:
        self.real = real
        #: The private copy, once made.
        self.shadow: Any = None
        #: Dicts before a copy is needed: key -> value or DELETED.
        self.writes: dict = {}
        #: Dicts with a copy: keys written since (published one by one).
        self.dirty: set = set()
        #: True when the copy was changed by an operation on the whole.
        self.whole = False

    def changed(self) -> bool:
        """False for a read shadow: nothing to publish (a defaultdict's copy that C
        code has added keys to, looking them up, has changed: copy_for_lookups)."""
        return self.whole or bool(self.writes) or bool(self.dirty) or (
            type(self.real) is collections.defaultdict and self.shadow is not None
            and len(self.shadow) != len(self.real))


def _copy(obj: Any) -> Any:
    kind = type(obj)
    if kind is list:
        return obj[:]
    if kind is dict or kind is set:
        return obj.copy()
    if kind is deque:
        # (not copy.copy: on 3.13t deque.__copy__ takes ~10 us per item)
        return deque(obj, obj.maxlen)
    return copy.copy(obj)          # OrderedDict, Counter, defaultdict, subclasses


#: Transaction.prune_private runs each time the registry reaches a multiple of this.
PRUNE_PRIVATE_EVERY = 1 << 16
#: Objects whose reference count sys.getrefcount may understate (deferred counts).
_DEFERRED_COUNTS = (type, types.FunctionType, types.ModuleType, types.CodeType)

def held_only_here(registry: dict) -> dict:
    """Take out of ``registry`` the values nothing else refers to; returns them.

    For registries that must not keep what they name alive (the objects a
    section made, used context-variable tokens) when weak references cannot
    be had. Classes, functions, modules and code may have deferred counts
    on 3.13t, which ``sys.getrefcount`` understates: they stay.
    """
    taken = {}
    for key in list(registry):
        value = registry[key]
        # (3: the registry, ``value`` and getrefcount's argument)
        if sys.getrefcount(value) <= 3 and not issubclass(type(value), _DEFERRED_COUNTS):
            taken[key] = registry.pop(key)
        del value
    return taken


#: Transaction.made before the attempt drops its registry of what it made.
_NONE_MADE: Mapping[int, Any] = MappingProxyType({})

def remember_made(made: dict[int, Any], private: Mapping[int, Any]) -> None:
    """Record in ``made`` what the registry ``private`` holds, for finalizers to be told apart.

    Only objects a finalizer can name matter (:func:`is_finalized`:
    instances with ``__del__``, generators' step wrappers among them, and
    ``weakref.finalize`` objects), and an id alone is not enough: once the
    object is gone, another thread may make one at the same address, and
    its finalizer would be taken for this attempt's (and dropped with it if
    it aborts). Where the type takes weak references the entry is one; for
    the rare finalized type that does not, the id must do (None).
    """
    for oid, obj in private.items():
        kind = type(obj)
        if is_finalized(kind):
            made[oid] = weakref.ref(obj) if kind.__weakrefoffset__ else None


#: type -> whether a finalizer can name its instances (see is_finalized).
_FINALIZED: dict[type, bool] = {weakref.finalize: True}


def count_as_finalized(kind: type) -> None:
    """Instances of ``kind`` are named by a finalizer of the engine's own (a
    generator's step wrapper, whose ``close`` a collected generator calls)."""
    _FINALIZED[kind] = True


def forget_finalized() -> None:
    """A class got (or lost) a ``__del__``: answers of :func:`is_finalized` may be stale."""
    for kind, answer in list(_FINALIZED.items()):
        if kind is not weakref.finalize and not answer:
            _FINALIZED.pop(kind, None)


def is_finalized(kind: type) -> bool:
    """Whether instances of ``kind`` have a ``__del__``, or are ``weakref.finalize``
    objects: what a finalizer names when it asks whose it is (cached per type)."""
    answer = _FINALIZED.get(kind)
    if answer is None:
        answer = _FINALIZED[kind] = getattr(kind, "__del__", None) is not None
    return answer


def note_if_built_here(tx: "Transaction", obj: Any) -> None:
    """An instrumented ``__init__`` starts on ``obj`` inside an optimistic section.

    When C code built the object (``map(Cls, ...)``, ``itertools.starmap``),
    the call barrier never saw the class called: an object of a class with
    a ``__del__`` and nothing in its ``__dict__`` yet is taken as made by
    this attempt, so that its finalizer goes with the attempt if it aborts.
    """
    kind = type(obj)
    if not is_finalized(kind) or tx.made_by(obj) or id(obj) in tx.attrs:
        return
    try:
        if object.__getattribute__(obj, "__dict__"):
            return
    except AttributeError:
        pass
    for name in _slot_names(kind):
        try:
            object.__getattribute__(obj, name)
            return                          # a slot is filled: not a new object
        except AttributeError:
            pass
    tx.note_made(obj)


#: type -> the names of its instances' slots (``__slots__`` along the MRO).
_SLOT_NAMES: dict[type, tuple[str, ...]] = {}


def _slot_names(kind: type) -> tuple[str, ...]:
    names = _SLOT_NAMES.get(kind)
    if names is None:
        found = []
        for base in kind.__mro__:
            slots = base.__dict__.get("__slots__", ())
            for name in ([slots] if isinstance(slots, str) else slots):
                if name not in ("__dict__", "__weakref__"):
                    # (a private name is stored mangled)
                    found.append(f"_{base.__name__.lstrip('_')}{name}"
                                 if name.startswith("__") and not name.endswith("__") else name)
        names = _SLOT_NAMES[kind] = tuple(found)
    return names


#: Called with an inevitable section as it commits (under W, in the serial
#: order): what hands on state that plain code changed in place during it
#: (``run_context.take_decimal_changes``).
AT_INEVITABLE_COMMIT: list[Callable[["Transaction"], None]] = []


class Transaction:
    """One attempt of one atomic section; see the module docstring."""

    __slots__ = ("rv", "reads", "private", "attrs", "containers", "inevitable", "doomed",
                 "stats", "entered_with_w", "token", "has_w", "read_count", "write_markers",
                 "after_commit", "at_end", "on_abort", "made", "releasing_own", "publishing",
                 "held_response", "subject", "clock_readings", "clock_priority")

    def __init__(self, stats: ThreadStats, entered_with_w: bool, token: Optional[list]) -> None:
        self.rv = CLOCK[0]
        self.reads: set[int] = {RESHAPE_STRIPE}
        #: id -> object created in this section (kept alive so ids stay unique).
        self.private: dict[int, Any] = {}
        #: id -> weak reference (or None) of objects this attempt made that
        #: ``private`` no longer holds (see remember_made and made_by); most
        #: sections never drop a registry, so none is allocated for them.
        self.made: Mapping[int, Any] = _NONE_MADE
        #: True while dropping ``private``: what dies then and is in ``made``
        #: this attempt made (the GC may collect other garbage meanwhile).
        self.releasing_own = False
        #: True while the log is written to the heap (publish): an object whose
        #: last reference a published value replaces dies then, and its
        #: finalizer must wait for the end of the section (section._finalize_now_or_after).
        self.publishing = False
        #: id(obj) -> [obj, {name: value or DELETED}]
        self.attrs: dict[int, list] = {}
        #: id(container) -> ContainerLog
        self.containers: dict[int, ContainerLog] = {}
        self.inevitable = False
        #: Set when an abort was raised, in case application code swallows it.
        self.doomed: Optional[AbortSection] = None
        self.stats = stats
        self.entered_with_w = entered_with_w
        self.token = token
        self.has_w = False
        self.read_count = 0
        self.write_markers: Optional[dict[int, bytes]] = {} if stmlog.enabled() else None
        #: Callables to run once the section has committed (dropped on abort).
        self.after_commit: list = []
        #: Callables to run once the section has ended, even when it turned
        #: inevitable half-way (dropped on abort): see :meth:`at_its_end`.
        self.at_end: list = []
        #: Callables that undo in-place effects of this attempt, run on abort.
        self.on_abort: list = []
        #: The event loop's record of a handler response this attempt holds
        #: back to its commit (tornado_stm.loop.response), or None.
        self.held_response: Any = None
        #: The first argument the section's function was called with (the
        #: handler, for a section framework code started on a handler's
        #: method), or None: whose response the attempt may hold back.
        self.subject: Any = None
        #: clock function -> [lowest, highest] reading this attempt made
        #: before it held W (read_clock), or None: most sections read no clock.
        self.clock_readings: Optional[dict[Any, list]] = None
        #: A retry of a section a later clock reader overtook (a long one):
        #: later readers wait for it to end instead of overtaking it again.
        self.clock_priority = False

    # -- consistency ------------------------------------------------------

    def abort(self, cause: str, stripe: Optional[int] = None) -> None:
        marker = _writer_markers.get(stripe, b"") if stripe is not None else b""
        self.doomed = AbortSection(cause, marker)
        raise self.doomed

    def validate(self) -> Optional[int]:
        """The first read stripe changed since the snapshot, or None if all are intact."""
        if BROKEN_FOR_TESTS["skip_validation"]:
            return None
        rv = self.rv
        for stripe in self.reads:
            if VERSIONS[stripe] > rv:
                return stripe
        return None

    def check(self) -> None:
        """Abort if the snapshot is no longer consistent."""
        if self.doomed is not None:
            raise self.doomed
        bad = self.validate()
        if bad is not None:
            self.abort("write-read conflict", bad)

    def whole_read_allowed(self, obj: Any) -> None:
        """Before reading a shared container as a whole without W: rerun inevitably if unsafe.

        An optimistic section may read a container while a commit changes
        it (validation catches that); for ``UNSAFE_WHOLE_READS`` types that
        read itself may crash, so the section runs again from its start as
        an inevitable one, holding W: slow, but right.
        """
        if UNSAFE_WHOLE_READS and isinstance(obj, UNSAFE_WHOLE_READS) and not self.inevitable:
            self.doomed = AbortSection(
                f"reading a shared {type(obj).__name__} as a whole", inevitable=True)
            raise self.doomed
        self.container_allowed(obj)

    def container_allowed(self, obj: Any) -> None:
        """Before logging or copying a shared container: rerun inevitably if no copy can stand in."""
        kind = type(obj)
        if kind not in CONTAINER_TYPES and not shadowable(kind) and not self.inevitable:
            self.doomed = AbortSection(
                f"a shared {kind.__qualname__} (a container subclass overriding its methods)",
                inevitable=True)
            raise self.doomed

    def extend(self, stripe: int) -> None:
        """Called when ``stripe`` is newer than the snapshot: move the snapshot forward."""
        spins = 0
        while VERSIONS[stripe] == LOCKED:
            spins += 1
            if spins > LOCKED_SPINS:
                self.abort("location being committed", stripe)
            time.sleep(0)
        now = CLOCK[0]
        bad = self.validate()
        if bad is not None:
            self.abort("write-read conflict", bad)
        self.rv = now

    def versioned(self, stripe: int, op: Any, *args: Any) -> Any:
        """``op(*args)``, a read of the locations of ``stripe``, consistent with the snapshot."""
        self.tick()
        if faults.ENABLED:
            faults.strike(self, "read")
        while True:
            before = VERSIONS[stripe]
            if before > self.rv:
                self.extend(stripe)
                continue
            try:
                value = op(*args)
            except Exception:
                if VERSIONS[stripe] != before:
                    continue
                self.reads.add(stripe)
                raise
            if VERSIONS[stripe] == before:
                self.reads.add(stripe)
                return value

    def note_write(self, stripe: int) -> None:
        if self.write_markers is not None and stripe not in self.write_markers:
            self.write_markers[stripe] = stmlog.user_marker()

    def has_writes(self) -> bool:
        return bool(self.attrs) or any(log.changed() for log in self.containers.values())

    # -- attributes -------------------------------------------------------

    def read_attr(self, obj: Any, name: str, class_owner: Optional[type] = None) -> Any:
        record = self.attrs.get(id(obj))
        if record is not None and name in record[1]:
            value = record[1][name]
            if value is not DELETED:
                return value
            # Deleted by this section: as after ``del obj.name``, the class's
            # value (or method, bound) shows again, or __getattr__ answers.
            return self.read_through_class(obj, name)
        if class_owner is not None:
            # A class-level value read through an instance: unless the
            # instance has its own, it is the class's, as this section sees
            # the classes of the MRO (its own writes to them included).
            own = (self.versioned(stripe_of_key(id(obj), name), _instance_value, obj, name)
                   if id(obj) not in self.private else _instance_value(obj, name))
            if own is not DELETED:
                return own
            return self.read_through_class(obj, name)
        return self.versioned(stripe_of_key(id(obj), name), getattr, obj, name)

    def read_through_class(self, obj: Any, name: str) -> Any:
        """``obj.name`` for an instance with no value of its own: its class's,
        bound as Python binds it, or its ``__getattr__``'s answer."""
        found, value = self.class_lookup(type(obj).__mro__, name)
        if found:
            return class_attribute_bound(value, obj, type(obj))
        fallback = getattr(type(obj), "__getattr__", None)
        if fallback is not None:
            return fallback(obj, name)
        raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}")

    def class_lookup(self, classes: Any, name: str) -> tuple[bool, Any]:
        """(True, value) from the first of ``classes`` whose dict has ``name``, as
        this section sees them (its own writes and deletions included), else
        (False, None).

        ``Sub.x`` found in ``Base`` depends on ``Base.x`` and on ``Sub`` not
        defining ``x``: a write to either must conflict with the read, so
        every class up to the one that answers is recorded.
        """
        for base in classes:
            record = self.attrs.get(id(base))
            if record is not None and name in record[1]:
                value = record[1][name]
                if value is DELETED:
                    continue
                return True, value
            value = self.versioned(stripe_of_key(id(base), name), _instance_value, base, name)
            if value is not DELETED:
                return True, value
        return False, None

    def read_type_attr(self, klass: type, name: str) -> Any:
        """``klass.name`` for a class object, versioned along its MRO, then its
        metaclass's (and this section's writes)."""
        found, value = self.class_lookup(klass.__mro__, name)
        if found:
            return class_attribute_bound(value, None, klass)
        found, value = self.class_lookup(type(klass).__mro__, name)
        if found:
            return class_attribute_bound(value, klass, type(klass))
        return getattr(klass, name)             # the metaclass's __getattr__, or the AttributeError

    def read_super_attr(self, proxy: super, name: str) -> Any:
        """``super().name``: versioned along the MRO after the class ``super()``
        names; what is not a class's (``__thisclass__``...) is super's own."""
        start, instance = proxy.__self_class__, proxy.__self__
        if start is None:
            return getattr(proxy, name)
        mro = start.__mro__
        found, value = self.class_lookup(mro[mro.index(proxy.__thisclass__) + 1:], name)
        if not found:
            return getattr(proxy, name)
        return class_attribute_bound(value, None if instance is start else instance, start)

    def has_attr_logged(self, obj: Any, name: str) -> bool:
        record = self.attrs.get(id(obj))
        return record is not None and name in record[1]

    def has_own_attr(self, obj: Any, name: str) -> bool:
        """Whether ``obj``'s own ``__dict__`` has ``name``, as this section sees it."""
        record = self.attrs.get(id(obj))
        if record is not None and name in record[1]:
            return record[1][name] is not DELETED
        return self.versioned(stripe_of_key(id(obj), name), _in_instance_dict, obj, name)

    def write_attr(self, obj: Any, name: str, value: Any) -> None:
        if faults.ENABLED:
            faults.strike(self, "write")
        record = self.attrs.get(id(obj))
        if record is None:
            record = self.attrs[id(obj)] = [obj, {}]
        record[1][name] = value
        if self.write_markers is not None:
            self.note_write(stripe_of_key(id(obj), name))

    def delete_attr(self, obj: Any, name: str) -> None:
        """``del obj.name`` of an instance attribute: the instance must have a value
        of its own (as ``object.__delattr__`` requires), in this section's view.

        Not ``hasattr``: a class attribute, a method or a ``__getattr__``
        answer is no value of the instance's, and asking a
        ``cached_property`` would compute and store it in place.
        """
        if not self.has_own_attr(obj, name):
            raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}")
        self.write_attr(obj, name, DELETED)

    # -- containers -------------------------------------------------------

    def log_for(self, obj: Any) -> ContainerLog:
        log = self.containers.get(id(obj))
        if log is None:
            self.container_allowed(obj)
            log = self.containers[id(obj)] = ContainerLog(obj)
        return log

    def materialize(self, log: ContainerLog) -> Any:
        """Give ``log`` its private copy (a read of the whole container)."""
        if log.shadow is None:
            real = log.real
            self.whole_read_allowed(real)
            shadow = self.versioned(stripe_of_object(id(real)), _copy, real)
            if log.writes:
                for key, value in log.writes.items():
                    if value is DELETED:
                        shadow.pop(key, None)
                    else:
                        shadow[key] = value
                log.dirty.update(log.writes)
                log.writes = {}
            log.shadow = shadow
        return log.shadow

    def read_shadow(self, obj: Any) -> Any:
        """The section's private copy of a shared container, for a reader that keeps it."""
        return self.materialize(self.log_for(obj))

    def copy_for_lookups(self, d: collections.defaultdict) -> Optional[dict]:
        """The section's copy of a shared ``defaultdict`` that C code is about to
        look keys up in (``operator.getitem(d, k)``, ``"%(k)s" % d``): a missing
        key's ``__missing__`` then inserts into the copy, and the commit
        publishes the keys the copy gained (``ContainerLog.changed``). None
        when the factory is not known to be safe to call from C, once per
        attempt (a library callable with effects): the caller becomes
        inevitable and uses :func:`hold_lookups_in_place`."""
        factory = d.default_factory
        if factory is not None and factory not in _FACTORIES_WITHOUT_EFFECTS and \
                getattr(factory, "__code__", None) not in INSTRUMENTED_CODES:
            return None
        return self.read_shadow(d)

    def touch(self, obj: Any) -> None:
        """Record a read of the whole of ``obj`` that plain code makes right after.

        The version is checked now and again at commit, so a concurrent
        change is caught; what is read in between may be torn, which the
        exception rule and the periodic validation make harmless.
        """
        self.whole_read_allowed(obj)
        self.versioned(stripe_of_object(id(obj)), _noop)

    def tick(self) -> None:
        """Count one read (or a loop's back edge): every VALIDATE_EVERY, re-validate."""
        self.read_count += 1
        if not self.read_count % VALIDATE_EVERY[0]:
            self.check()

    def shadow_for_write(self, obj: Any) -> Any:
        """The private copy of a shared container, to be changed as a whole."""
        if faults.ENABLED:
            faults.strike(self, "write")
        log = self.log_for(obj)
        shadow = self.materialize(log)
        log.whole = True
        if self.write_markers is not None:
            self.note_write(stripe_of_object(id(obj)))
        return shadow

    def whole_read(self, obj: Any, op: Any, *args: Any) -> Any:
        """``op(container, *args)`` on the section's view of a shared container."""
        log = self.containers.get(id(obj))
        if log is not None:
            return op(self.materialize(log), *args)
        self.whole_read_allowed(obj)
        return self.versioned(stripe_of_object(id(obj)), op, obj, *args)

    def read_dict_item(self, d: dict, key: Any) -> Any:
        log = self.containers.get(id(d))
        if log is None and type(d) is not dict:
            self.container_allowed(d)
        if log is not None:
            if log.shadow is not None:
                if type(d) is not dict and key not in log.shadow:
                    return self._missing_item(d, key, log.shadow)
                return log.shadow[key]
            if key in log.writes:
                value = log.writes[key]
                if value is not DELETED:
                    return value
                if not hasattr(type(d), "__missing__"):
                    raise KeyError(key)
        if type(d) is not dict and hasattr(type(d), "__missing__"):
            # defaultdict & co. may insert on a missing key: do that privately.
            if not self.dict_contains(d, key):
                return self._missing_item(d, key, self.materialize(self.log_for(d)))
        return self.versioned(stripe_of_key(id(d), key), d.__getitem__, key)

    def _missing_item(self, d: dict, key: Any, shadow: dict) -> Any:
        """``d[key]`` of a dict subclass with ``__missing__``, on its private copy ``shadow``.

        A ``defaultdict``'s factory is called through the call barrier, not
        from C: one with effects (``itertools.count().__next__``,
        ``pool.pop``) would act on shared objects unlogged, once per attempt.
        """
        if type(d).__missing__ is collections.defaultdict.__missing__:
            factory = shadow.default_factory
            if factory is None:
                raise KeyError(key)
            value = BARRIERS_ABOVE.call(self, factory)
            shadow[key] = value
        else:
            value = shadow[key]
        if key in shadow:
            self.containers[id(d)].dirty.add(key)
        return value

    def dict_contains(self, d: dict, key: Any) -> bool:
        log = self.containers.get(id(d))
        if log is None and type(d) is not dict:
            self.container_allowed(d)
        if log is not None:
            if log.shadow is not None:
                return key in log.shadow
            if key in log.writes:
                return log.writes[key] is not DELETED
        return self.versioned(stripe_of_key(id(d), key), d.__contains__, key)

    def write_dict_item(self, d: dict, key: Any, value: Any) -> None:
        if faults.ENABLED:
            faults.strike(self, "write")
        if _compares_itself(key):
            # Its __eq__ may raise or read shared state: run it now, in place,
            # where a serial run would, not at publication.
            self.become_inevitable(f"a dict key of class {type(key).__qualname__}")
            direct_dict_write(d, key, operator.setitem, value)
            return
        log = self.log_for(d)
        if log.shadow is None and (isinstance(d, OrderedDict) or log.writes.get(key) is DELETED):
            # Key order is state: a deleted key set again moves to the end,
            # which only a copy published as a whole reproduces.
            self.shadow_for_write(d)
        if log.shadow is not None:
            log.shadow[key] = value
            log.dirty.add(key)
        else:
            # The lookup a serial d[key] = value makes, now: an unhashable key,
            # or a key __eq__ that raises, fails here as in Python, not at publication.
            self.dict_contains(d, key)
            log.writes[key] = value
        if self.write_markers is not None:
            self.note_write(stripe_of_key(id(d), key))

    def delete_dict_item(self, d: dict, key: Any) -> None:
        if _compares_itself(key):
            self.become_inevitable(f"a dict key of class {type(key).__qualname__}")
            direct_dict_write(d, key, operator.delitem)
            return
        if not self.dict_contains(d, key):
            if isinstance(d, Counter):
                return                        # Counter.__delitem__ ignores a missing key
            raise KeyError(key)
        log = self.log_for(d)
        if log.shadow is None and isinstance(d, OrderedDict):
            self.shadow_for_write(d)
        if log.shadow is not None:
            del log.shadow[key]
            log.dirty.add(key)
        else:
            log.writes[key] = DELETED

    # -- world lock -------------------------------------------------------

    def take_w(self) -> None:
        """Hold W (taking it back if the section started under W)."""
        if self.has_w:
            return
        started = time.perf_counter()
        waited = []

        def on_wait() -> None:
            waited.append(True)
            stmlog.record(stmlog.STM_WAIT_OTHER_INEVITABLE, self.stats.thread_num)

        def on_done() -> None:
            stmlog.record(stmlog.STM_WAIT_DONE, self.stats.thread_num)

        if self.entered_with_w:
            WORLD_LOCK.resume(self.token, on_wait, on_done)
        else:
            WORLD_LOCK.acquire(on_wait, on_done)
        if waited:
            self.stats.wait_w_seconds += time.perf_counter() - started
        self.has_w = True

    def leave_w(self) -> None:
        """Section over: hold W exactly when the section started under it."""
        if self.inevitable:
            enter_clocks_read_in_place()
        if self.entered_with_w:
            self.take_w()
        elif self.has_w:
            self.has_w = False
            WORLD_LOCK.release()

    def release_for_retry(self) -> Optional[list]:
        """After an abort: give W up again; returns the token for the next attempt."""
        if self.entered_with_w:
            if self.has_w:
                self.has_w = False
                return WORLD_LOCK.suspend()
            return self.token
        if self.has_w:
            self.has_w = False
            WORLD_LOCK.release()
        return None

    # -- commit and inevitability ------------------------------------------

    def publication(self) -> "Publication":
        """What a commit of the redo log writes: the stripes, and the changed keys of each dict."""
        stripes: set[int] = set()
        for oid, (obj, names) in self.attrs.items():
            for name in names:
                stripes.add(stripe_of_key(oid, name))
        # The changed keys of each dict, found once: they name the stripes
        # to lock and, for a private copy, the keys to publish.
        changed_keys: dict[int, list] = {}
        written = [(oid, log) for oid, log in self.containers.items() if log.changed()]
        # The whole-dict stripes of plain dicts written key by key: two
        # commits writing other keys of one such dict give one result in
        # either order (unless both add keys: the dict's order), which
        # lets one go before the other (place_before_later_readers).
        commuting: set[int] = set()
        inserts: set[int] = set()
        for oid, log in written:
            whole = stripe_of_object(oid)
            if type(log.real) is dict and log.shadow is None and _CLOCK_READERS:
                commuting.add(whole)
                if _adds_keys(log):
                    inserts.add(whole)
            else:
                stripes.add(whole)
            if isinstance(log.real, dict):
                changed_keys[oid] = keys = _changed_keys(log)
                stripes.update(stripe_of_key(oid, key) for key in keys[0])
                if isinstance(log.real, OrderedDict) and log.shadow is not None:
                    # Published by clear() and refill: every key is briefly
                    # missing, so every key's stripe is locked meanwhile.
                    stripes.update(stripe_of_key(oid, key) for key in log.real)
        if not commuting:
            return Publication(stripes, changed_keys, written)
        # (a stripe is ordered if any location it covers is: two locations
        # may share one)
        publication = Publication(stripes | commuting, changed_keys, written)
        publication.ordered = stripes
        publication.inserts = inserts
        return publication

    def publish(self, hold_stripes: bool = False,
                publication: Optional["Publication"] = None) -> int:
        """Make the redo log visible (caller holds W and has validated); the
        commit's version (the clock's value once the stripes are released).

        ``hold_stripes`` (a section turning inevitable half-way): the stripes
        stay locked until the section ends, as its later in-place writes'
        do. The objects the section created are reachable only through what
        it wrote, and the rewriter lets the section fill them without
        barriers (``instrument/fresh.py``): no reader may reach one before
        the section has finished with it.
        """
        if publication is None:
            publication = self.publication()
        stripes, changed_keys, written = (publication.stripes, publication.changed_keys,
                                          publication.written)
        publication.written = publication.changed_keys = None
        lock_stripes(stripes)
        # Publishing runs application code (a key's __hash__ and __eq__): its
        # reads must not abort a half-made publication, so the barriers act
        # as in an inevitable section meanwhile (the caller holds W).
        was_inevitable, self.inevitable = self.inevitable, True
        self.publishing = True
        try:
            for obj, names in self.attrs.values():
                for name, value in names.items():
                    _publish_attr(obj, name, value)
            for oid, log in written:
                _publish_container(log, changed_keys.get(oid))
        finally:
            self.inevitable = was_inevitable
            self.publishing = False
            if hold_stripes:
                _held.update(stripes)
            else:
                release_stripes(stripes)
        if self.write_markers:
            # Taken first: a finalizer the GC runs meanwhile on this thread
            # may write, and so mark, while the dict is being copied.
            markers, self.write_markers = self.write_markers, {}
            _writer_markers.update(markers)
        # Dropped as part of the publication: what only the log kept alive
        # (an object the section made where the barriers could not register
        # it) dies here, and its finalizer waits for the section's end
        # rather than write into a log already published.
        self.publishing = True
        try:
            obj = names = log = written = changed_keys = None   # (this frame's own references too)
            self.attrs = {}
            self.containers = {}
        finally:
            self.publishing = False
        return CLOCK[0]

    def commit(self) -> None:
        if self.doomed is not None:
            raise self.doomed
        if self.inevitable:
            for hook in AT_INEVITABLE_COMMIT:
                hook(self)
            # What it made after its turn dies here, inside it (in place,
            # under W), as an optimistic section's does at its commit; kept
            # until the Transaction object goes, a generator's ``finally``
            # would run after the section, or never.
            self.release_private()
            return
        if faults.ENABLED:
            faults.strike(self, "commit")
        self.check_copies_kept()
        if not self.has_writes() and self.clock_readings is None and not _CLOCK_READERS:
            self.check()                # read-only: still one consistent state
            return
        # (a read-only section commits under W, too, while some section holds
        # clock readings: it then takes its place in COMMITTED_ORDER)
        self.wait_for_earlier_clock_readers()
        hold_for_the_commit = not self.has_w and not self.entered_with_w
        self.take_w()
        if hold_for_the_commit:
            _COMMIT_ONLY_HOLD[0] = WORLD_LOCK.hold_number()
        try:
            self.check()
            publication = self.publication()
            readings = self.clock_readings
            position = self.check_clock_order(publication)
            publication.version = self.publish(publication=publication)
            enter_committed(publication, readings, self.reads, position)
            if position is not None:
                self.stats.placed_earlier += 1
        except AbortSection:
            raise
        except BaseException:
            self.leave_w()      # a failure of the engine's own: never keep W held
            raise

    def become_inevitable(self, cause: str, marker: bytes = b"", at_start: bool = False) -> None:
        """Validate, take W, publish; from now on this section never aborts.

        ``at_start``: the section has run nothing yet, so its snapshot is
        taken anew once W is held (every section reads RESHAPE_STRIPE from
        its start: a class switch committed meanwhile must not abort it,
        over and over, on the way to W).
        """
        if self.inevitable:
            return
        if self.doomed is not None:
            raise self.doomed
        if not at_start:
            self.check_copies_kept()
        # Logged before the wait for W, as PyPy-STM did: its analyser charges
        # the following WAIT_OTHER_INEVITABLE..WAIT_DONE to this marker, so
        # the report names the line whose inevitability cost the wait.
        stmlog.record(stmlog.STM_BECOME_INEVITABLE, self.stats.thread_num,
                      marker or (stmlog.user_marker() if stmlog.enabled() else b""))
        self.wait_for_earlier_clock_readers(every=True)
        self.take_w()
        if at_start:
            self.rv = CLOCK[0]
        self.check()
        self.check_clock_order()
        self.publish(hold_stripes=True)
        # Threads running plain code may write while this section runs in
        # place, as plain Python threads could (one it waits for must); not
        # before the log is validated and published: a plain write in
        # between would be checked by nothing, and a container's published
        # copy would overwrite it.
        WORLD_LOCK.open_to_plain_code()
        self.inevitable = True
        # Nothing can undo this attempt now: what waited for its commit runs.
        self.on_abort = []
        actions, self.after_commit = self.after_commit, []
        for action in actions:
            action()
        self.reads = set()
        # Publishing made the objects created so far reachable: from now on
        # their in-place writes must be versioned like any shared object's.
        self.release_private()
        self.stats.inevitable[cause] += 1

    def read_clock(self, clock: Callable[[], Any]) -> Any:
        """``clock()`` (``time.monotonic``...), to be placed in the serial order at the commit.

        In a serial run the readings of one clock never go back from one
        section to the next. Two sections running side by side may read it
        in one order and commit in the other: the readings are kept, and
        :meth:`check_clock_order` aborts the section that would go back. A
        section holding W (inevitable) reads after every commit so far; its
        reading is entered at once. Readings are kept per clock, in
        nanoseconds (``time.time()`` and ``time.time_ns()`` read one:
        ``CLOCK_SOURCES``; a float's own step there is about 240 ns).
        """
        source, in_seconds = CLOCK_SOURCES.get(clock, (clock, False))
        # Entered before the reading: a hold that ends after this sees it
        # (enter_clocks_read_in_place); one that ended before read earlier.
        CLOCKS_IN_USE.add(source)
        if self.doomed is not None:
            # (a finalizer run for an aborted attempt: nothing it reads commits,
            # and a registration would never be taken back)
            return clock()
        if not self.inevitable and self.clock_readings is None:
            # Registered before the reading, so that a section reading
            # after this one waits for it (wait_for_earlier_clock_readers).
            self.clock_readings = {}
            _register_clock_reader(self)
        value = clock()
        reading = round(value * 1e9) if in_seconds else value
        if self.inevitable:
            _raise_committed_clock(source, reading)
            return value
        span = self.clock_readings.get(source)
        if span is None:
            self.clock_readings[source] = [reading, reading]
        else:
            span[0] = min(span[0], reading)
            span[1] = max(span[1], reading)
        return value

    def check_clock_order(self, writes: Optional["Publication"] = None) -> Optional[int]:
        """Under W, before publishing: find the section its place in the serial
        order, given its clock readings; abort if there is none.

        The place is the end of the order (None), unless a section that read
        one of its clocks later has committed already: then it is the index
        in ``COMMITTED_ORDER`` before which it can go
        (:func:`place_before_later_readers`), given what it ``writes``; an
        inevitable turn (``writes`` None) only goes at the end.
        """
        readings, self.clock_readings = self.clock_readings, None
        if readings is None:
            return None
        first_entry = _CLOCK_READERS.get(id(self), (None, None, None, -1))[3]
        _unregister_clock_reader(self)
        position = None
        for source, (lowest, _) in readings.items():
            committed = COMMITTED_CLOCK_READINGS.get(source)
            if committed is not None and committed > lowest:
                position = None if writes is None or first_entry < _DROPPED_BELOW[0] \
                    else place_before_later_readers(self.rv, readings, self.reads, writes)
                if position is None:
                    self.abort(CLOCK_READ_OUT_OF_ORDER)
                break
        for source, (_, highest) in readings.items():
            _raise_committed_clock(source, highest)
        return position

    def wait_for_earlier_clock_readers(self, every: bool = False) -> None:
        """Before taking W to commit (or to become inevitable): wait for the
        optimistic sections that read one of this section's clocks before it
        did, and conflict with it so far (:func:`_independent`), to end, so
        that they commit first, as a serial run would order them; otherwise
        :meth:`check_clock_order` would abort them, long searches included,
        whenever a later reader commits first. Independent ones will go
        before it in the serial order at their commit; ``every`` (a section
        turning inevitable, which nothing can go before) waits for all.

        Only an optimization: the wait is bounded (``CLOCK_ORDER_WAIT``)
        and made without W, so it can hold nothing up for long; whatever
        order the commits then take, :meth:`check_clock_order` keeps the
        readings serial. A section waits only for sections that began
        reading clocks before it did (their turn, taken at their first
        reading, is lower), so no two sections wait for each other, even
        when each read one of two clocks first.
        """
        mine = self.clock_readings
        turn = _CLOCK_READERS.get(id(self), (None, None, None, None))[1]
        if mine is None or self.has_w or turn is None:
            return
        now = time.perf_counter()
        deadline = now + CLOCK_ORDER_WAIT
        written = None if every else _stripes_written(self)
        # (a reader running for longer than this is not waited for: a long
        # search, or one some future path failed to take back)
        with _clock_readers_changed:
            while True:
                too_old = time.perf_counter() - _CLOCK_READER_STALE
                earlier = [other for other, other_turn, since, _ in _CLOCK_READERS.values()
                           if other_turn < turn and since > too_old
                           and _read_earlier(other.clock_readings, mine)
                           and (every or other.clock_priority
                                or not _independent(self, written, other))]
                if not earlier:
                    return
                left = deadline - time.perf_counter()
                if left <= 0:
                    # Overtaken once, a long section would be overtaken on
                    # every retry (each reads the clock anew) until it runs
                    # inevitably: an overtaken one is waited for to its end.
                    if not any(other.clock_priority for other in earlier):
                        return
                    left = _CLOCK_READERS_POLL
                # Woken when a reader ends; the timeout also notices one
                # whose first reading was not yet recorded when we looked.
                _clock_readers_changed.wait(min(left, _CLOCK_READERS_POLL))

    def check_copies_kept(self) -> None:
        """Abort, to run again inevitably, if something still holds one of the
        section's private copies of a shared container.

        Iterators, views and wrappers made in the section read its copy
        (``iter(lst)``, ``d.values()``, a generator expression,
        ``MappingProxyType(d)``), so that the section reads one consistent
        state. Kept in shared state for a later section, one would read that
        copy for ever instead of the live container. At commit, and before
        a section turns inevitable half-way (its copies then go stale), only
        the log itself may hold a copy: ``sys.getrefcount`` counts the
        others. A false alarm (a copy still held by a local of a frame that
        is running, or by garbage not yet collected) costs a second,
        inevitable run, which makes its iterators over the live containers.

        The section's registry of the objects it made goes first: it keeps
        the generators the section made (and the iterators they hold) alive,
        and it is not needed from here on (commit, or the turn, which drops it).
        """
        self.release_private()
        for log in self.containers.values():
            shadow = log.shadow
            # The references: log.shadow, this local, getrefcount's argument.
            if shadow is not None and sys.getrefcount(shadow) > _COPY_REFERENCES:
                raise AbortSection(COPY_KEPT, inevitable=True)

    def mark_private(self, obj: Any) -> None:
        """Register ``obj`` as made by this attempt (its writes go in place)."""
        private = self.private
        private[id(obj)] = obj
        if len(private) % PRUNE_PRIVATE_EVERY == 0:
            self.prune_private()

    def release_private(self) -> None:
        """Drop the registry of the objects this attempt made, remembering their ids.

        Those only the registry kept alive die here, and their finalizers are
        the attempt's own (written to its log, dropped with it if it aborts);
        so are the objects those finalizers make, dropped in turn.
        """
        while self.private:
            private, self.private = self.private, {}
            self._let_go(private)

    def _let_go(self, dropped: dict[int, Any]) -> None:
        """Drop the registered objects ``dropped``, remembering their ids:
        those it alone kept alive die here, their finalizers the attempt's."""
        if not dropped:
            return
        if self.made is _NONE_MADE:
            self.made = {}
        remember_made(self.made, dropped)
        self.releasing_own = True
        try:
            dropped.clear()
        finally:
            self.releasing_own = False

    def prune_private(self) -> None:
        """Drop from the registry the objects only it keeps alive.

        The registry holds every display, comprehension and instance the
        section made; a long section making temporaries in a loop (a parser,
        a path search) would keep them all alive to its end. Called as the
        registry grows by :data:`PRUNE_PRIVATE_EVERY` entries (by ``new`` and
        ``adopt``, and the C fast path's ``new``). What dies here dies as it
        would in plain Python, its finalizer the attempt's (as in
        :meth:`release_private`); and its id no longer names a private object
        once another thread can make one at the same address.
        """
        self._let_go(held_only_here(self.private))

    def note_made(self, obj: Any) -> None:
        """Record that this attempt made ``obj``, for its finalizer's sake only.

        For an object with a ``__del__`` made where the barriers could not
        register it (by C code calling its class, by a library copying one):
        if the attempt aborts, it dies with the attempt. It stays shared
        otherwise: its writes still go to the log.
        """
        if self.made is _NONE_MADE:
            self.made = {}
        remember_made(self.made, {id(obj): obj})

    def made_by(self, obj: Any) -> bool:
        """Whether this attempt made ``obj``: in its registry, or in one it dropped."""
        oid = id(obj)
        if oid in self.private:
            return True
        if oid not in self.made:
            return False
        ref = self.made[oid]
        return ref is None or ref() is obj

    def everything_made(self) -> dict[int, Any]:
        """``made`` and the registry together, as ``made`` records them (for the attempt's sink)."""
        made = dict(self.made)
        remember_made(made, self.private)
        return made

    def adopt(self, obj: Any) -> None:
        """Make a just-created object private, applying its logged attribute writes.

        ``__init__`` runs before the call barrier knows the object is new,
        so its attribute writes went to the redo log; they move onto the
        object itself, which no other thread can see yet.
        """
        oid = id(obj)
        private = self.private
        private[oid] = obj                    # (mark_private, inline: a hot path)
        if len(private) % PRUNE_PRIVATE_EVERY == 0:
            self.prune_private()
        record = self.attrs.pop(oid, None)
        if record is not None:
            for name, value in record[1].items():
                _publish_attr(obj, name, value)

    def defer(self, action: Any) -> None:
        """Run ``action()`` after this section commits (never if it aborts)."""
        if self.inevitable:
            action()
        else:
            self.after_commit.append(action)

    def at_its_end(self, action: Any) -> None:
        """Run ``action()`` once this section has ended (never if it aborts).

        Unlike :meth:`defer`, not when the section turns inevitable: a call
        it queues (``transaction.add``) comes after it in the serial order,
        and must not start while the section still runs (it would read what
        the section has yet to write, or the objects it is still filling).
        """
        self.at_end.append(action)

    def undo_on_abort(self, action: Any) -> None:
        """Run ``action()`` if this attempt aborts (it undoes an in-place effect)."""
        if not self.inevitable:
            self.on_abort.append(action)

    def discard(self) -> None:
        """Drop the redo log and undo the attempt's in-place effects (an abort)."""
        undo, self.on_abort = self.on_abort, []
        for action in reversed(undo):
            action()
        self.after_commit = []
        self.at_end = []
        self.attrs = {}
        self.containers = {}
        self.private = {}
        # As at a commit (section._end): what refers back to the transaction
        # goes, so the attempt's objects die by reference count.
        self.held_response = self.subject = None
        self.drop_clock_readings()

    def drop_clock_readings(self) -> None:
        """This attempt's clock readings will never be committed (it aborted)."""
        if self.clock_readings is not None:
            self.clock_readings = None
            _unregister_clock_reader(self)


#: The abort cause of a section whose clock reading a later-read one committed first.
CLOCK_READ_OUT_OF_ORDER = "clock read out of serial order"

def _clock_sources() -> dict[Any, tuple[str, bool]]:
    """``time``'s clock functions -> (the clock each reads, whether in seconds).

    ``time.time`` and ``time.time_ns`` read one clock, and so do
    ``monotonic`` and ``perf_counter`` where the platform implements both
    alike (Linux: ``CLOCK_MONOTONIC``); their readings are ordered together.
    """
    sources = {}
    for name in ("time", "monotonic", "perf_counter", "process_time"):
        source = time.get_clock_info(name).implementation
        sources[getattr(time, name)] = (source, True)
        sources[getattr(time, name + "_ns")] = (source, False)
    return sources


#: A clock function -> (the clock it reads, whether its readings are in
#: seconds, as floats, rather than in nanoseconds).
CLOCK_SOURCES = _clock_sources()
#: A clock -> a function reading it in nanoseconds.
_READ_IN_NANOSECONDS = {source: clock for clock, (source, in_seconds) in CLOCK_SOURCES.items()
                        if not in_seconds}

#: A clock -> the highest reading of it (in nanoseconds) a committed section made
#: (written under W; see Transaction.read_clock).
COMMITTED_CLOCK_READINGS: dict[Any, Any] = {}
#: The clocks some section has read through the special (only grows).
CLOCKS_IN_USE: set[Any] = set()


def enter_clocks_read_in_place() -> None:
    """Under W, at the end of a hold that ran code in place (an inevitable
    section, a coroutine step): enter a reading of now for every clock the
    application reads, as if the hold had read each one last.

    Library code run in place reads clocks the special never sees (a
    dataclass's ``default_factory=time.monotonic``, ``datetime.now()``).
    An optimistic section that read a clock before this hold and commits
    after it would go back in the serial order: it now aborts instead.
    Only clocks some section read through the special are entered (the
    others have no optimistic readings to order).
    """
    readings = {}
    for source in list(CLOCKS_IN_USE):
        read = _READ_IN_NANOSECONDS.get(source)
        if read is not None:
            readings[source] = [now := read(), now]
            _raise_committed_clock(source, now)
    enter_committed(None, readings)


class Publication:
    """What one commit writes (:meth:`Transaction.publication`), then its
    place in the serial order (:data:`COMMITTED_ORDER`)."""

    __slots__ = ("stripes", "ordered", "inserts", "changed_keys", "written", "version",
                 "readings", "reads", "entry", "hold")

    def __init__(self, stripes: set[int], changed_keys: Optional[dict] = None,
                 written: Optional[list] = None) -> None:
        self.stripes = stripes
        #: The stripes whose writes must keep their order: all of them, but
        #: the whole-dict stripes of plain dicts written key by key.
        self.ordered = stripes
        #: Of those dicts, the ones it adds keys to.
        self.inserts: set[int] = _NO_STRIPES
        self.changed_keys = changed_keys
        self.written = written
        #: The clock's value once published.
        self.version = CLOCK[0]
        #: Its clock readings (source -> [lowest, highest]), or None.
        self.readings: Optional[dict] = None
        #: The stripes it read, or None: unknown (code that ran in place).
        self.reads: Optional[set[int]] = None
        #: Its number among the entries of COMMITTED_ORDER, in the order they were made.
        self.entry = 0
        #: The hold of W it committed in (WorldLock.hold_number).
        self.hold = 0


#: The serial order of what committed since the oldest optimistic section
#: holding clock readings began to read them, kept only while there is one:
#: optimistic commits (with what they read and wrote), and ends of holds of
#: W that ran code in place (what they read unknown). A section whose
#: reading a later reader's commit overtook may still go *before* that
#: reader in this order, when they are independent
#: (:func:`place_before_later_readers`). Changed under W only.
COMMITTED_ORDER: list[Publication] = []
#: How many entries COMMITTED_ORDER has been given (a reader notes it when it registers).
_ENTRIES_MADE = [0]
#: Entries numbered below this were dropped while a reader registered before
#: them still ran (a stale one): such a reader is never placed.
_DROPPED_BELOW = [0]
#: The hold of W an optimistic commit took only to commit (nothing else ran
#: in it), and the last hold that was not such a one (it may have run code
#: in place: what that code read is not known). Both written under W.
_COMMIT_ONLY_HOLD = [0]
_LAST_FOREIGN_HOLD = [0]


def enter_committed(publication: Optional[Publication], readings: Optional[dict],
                    reads: Optional[set[int]] = None, position: Optional[int] = None) -> None:
    """Under W: enter a commit (or, ``publication`` None, the end of a hold
    of W that ran code in place) in COMMITTED_ORDER, at ``position`` or at its end."""
    if not _CLOCK_READERS:
        COMMITTED_ORDER.clear()     # (nobody registered before now needs any of it)
        return
    if publication is None:
        publication = Publication(set())
    else:
        publication.reads = reads
    publication.readings = readings
    publication.entry = _ENTRIES_MADE[0]
    publication.hold = WORLD_LOCK.hold_number()
    _ENTRIES_MADE[0] += 1
    if position is None:
        COMMITTED_ORDER.append(publication)
    else:
        COMMITTED_ORDER.insert(position, publication)
    # What every reader still running registered after can never come
    # after one of its later readers: it is of no use to any of them. A
    # reader running for longer than _CLOCK_READER_STALE keeps nothing:
    # what it would need may go, and it is then never placed.
    recent = time.perf_counter() - _CLOCK_READER_STALE
    oldest = min((first_entry for _, _, since, first_entry in list(_CLOCK_READERS.values())
                  if since > recent), default=_ENTRIES_MADE[0])
    drop = 0
    while drop < len(COMMITTED_ORDER) and COMMITTED_ORDER[drop].entry < oldest:
        drop += 1
    if drop:
        _DROPPED_BELOW[0] = max(_DROPPED_BELOW[0], COMMITTED_ORDER[drop - 1].entry + 1)
        del COMMITTED_ORDER[:drop]


_NO_STRIPES: set[int] = set()
#: Types of dict keys whose ``in`` runs no application code.
_PLAIN_KEY_TYPES = frozenset({str, int, float, bool, bytes, type(None)})


def _writes_clash(stripes: set[int], ordered: set[int],
                  other_stripes: set[int], other_ordered: set[int]) -> bool:
    """Whether two commits' writes (each: every stripe, and those whose
    writes keep their order, as Publication's) give another result in the
    other order: a stripe both write, unless it is the whole stripe of a
    plain dict that each writes other keys of."""
    return not ordered.isdisjoint(other_stripes) or not other_ordered.isdisjoint(stripes)


def _plain_key(key: Any) -> bool:
    """A dict key whose hash and comparison run no application code."""
    kind = type(key)
    if kind is tuple:
        return all(type(item) in _PLAIN_KEY_TYPES for item in key)
    return kind in _PLAIN_KEY_TYPES


def _adds_keys(log: "ContainerLog") -> bool:
    """Whether a dict's per-key log adds a key the dict does not have (under W);
    True, too, for a key whose comparison could run application code."""
    real = log.real
    for key, value in log.writes.items():
        if not _plain_key(key) or (value is not DELETED and key not in real):
            return True
    return False


def place_before_later_readers(rv: int, readings: dict, reads: set[int],
                               writes: Publication) -> Optional[int]:
    """Under W, for a section whose clock readings a later reader's commit
    overtook: the index in COMMITTED_ORDER before which it can still go in
    the serial order, or None (it must abort).

    It goes before the first entry that read one of its clocks later than
    it did (its *later readers* and everything after them, ``later``), if:
    it saw none of them (its snapshot ``rv`` is older than each one's
    commit: so, validated, it read nothing they wrote); none of them read
    a stripe it writes (they would have seen its writes) or wrote one of
    them (one result would be lost under the other: only other keys of
    one plain dict, not both adding keys, give one result in either
    order: :func:`_writes_clash`); each of them knows what it read, and no
    hold of W ran code in place since the first of them (such code does
    not record what it read); and each of their readings of its clocks is
    at or above its own highest. Then running it just before them gives
    every section the values it saw, and every clock reads forward.
    """
    first = None
    for index, entry in enumerate(COMMITTED_ORDER):
        theirs = entry.readings
        if theirs and any(source in theirs and theirs[source][1] > lowest
                          for source, (lowest, _) in readings.items()):
            first = index
            break
    if first is None:
        return None             # overtaken by a reading the order no longer holds
    later = COMMITTED_ORDER[first:]
    if _LAST_FOREIGN_HOLD[0] >= min(entry.hold for entry in later):
        return None             # code ran in place since: what it read is unknown
    for entry in later:
        if entry.reads is None or entry.version <= rv:
            return None
        if (not writes.stripes.isdisjoint(entry.reads)
                or _writes_clash(writes.stripes, writes.ordered, entry.stripes, entry.ordered)
                or not writes.inserts.isdisjoint(entry.inserts)):
            return None
        theirs = entry.readings
        if theirs and any(source in theirs and theirs[source][0] < highest
                          for source, (_, highest) in readings.items()):
            return None
    return first


#: Optimistic sections that have read a clock and not ended yet, by id:
#: (the transaction, its turn: the order of their first readings, when, and
#: the number of the next entry of COMMITTED_ORDER when it registered).
_CLOCK_READERS: dict[int, tuple["Transaction", int, float, int]] = {}
_clock_turns = itertools.count()
_clock_readers_changed = threading.Condition()
#: The longest a commit waits for earlier readers of its clocks, in seconds.
CLOCK_ORDER_WAIT = 0.25
#: Seconds after which a clock reader is no longer waited for.
_CLOCK_READER_STALE = 5.0
#: Seconds between two looks at the readers while waiting.
_CLOCK_READERS_POLL = 0.002


def _register_clock_reader(tx: "Transaction") -> None:
    with _clock_readers_changed:
        _CLOCK_READERS[id(tx)] = (tx, next(_clock_turns), time.perf_counter(), _ENTRIES_MADE[0])


def _unregister_clock_reader(tx: "Transaction") -> None:
    with _clock_readers_changed:
        if _CLOCK_READERS.pop(id(tx), None) is not None:
            _clock_readers_changed.notify_all()


def _read_earlier(theirs: Optional[dict], mine: dict) -> bool:
    """True if readings ``theirs`` (another section's, read from this
    thread while it runs) may come before ``mine`` on some clock."""
    if theirs is None:
        return True             # registered, first reading not recorded yet (or ending)
    for source, (lowest, _) in list(mine.items()):
        span = theirs.get(source)
        if span is not None and span[0] < lowest:
            return True
    return False


def _stripes_written(tx: "Transaction") -> Optional[tuple[set[int], set[int]]]:
    """The stripes ``tx``'s redo log writes so far, and among them those
    whose writes must keep their order (as Publication.ordered), or None if
    the log changed while this looked (it may be another thread's); for an
    estimate only."""
    try:
        ordered = set()
        commuting = set()
        for oid, (_, names) in list(tx.attrs.items()):
            ordered.update(stripe_of_key(oid, name) for name in list(names))
        for oid, log in list(tx.containers.items()):
            if log.changed():
                if log.shadow is None and isinstance(log.real, dict):
                    keys = list(log.writes)
                    if not all(map(_plain_key, keys)):
                        return None     # (its hash could run application code, here)
                    ordered.update(stripe_of_key(oid, key) for key in keys)
                    if type(log.real) is dict:
                        commuting.add(stripe_of_object(oid))
                        continue
                ordered.add(stripe_of_object(oid))
        return ordered | commuting, ordered
    except RuntimeError:            # (a dict of the other thread's changed size)
        return None


def _independent(tx: "Transaction", written: Optional[tuple[set[int], set[int]]],
                 other: "Transaction") -> bool:
    """Whether ``tx``, committing what it has ``written`` (_stripes_written),
    leaves ``other`` (an earlier clock reader still running) likely to go
    before it in the serial order (place_before_later_readers): neither has
    read what the other writes, nor written it, so far."""
    theirs = _stripes_written(other)
    if written is None or theirs is None:
        return False
    try:
        return (written[0].isdisjoint(other.reads) and theirs[0].isdisjoint(tx.reads)
                and not _writes_clash(*written, *theirs))
    except RuntimeError:
        return False


def _raise_committed_clock(source: Any, highest: Any) -> None:
    committed = COMMITTED_CLOCK_READINGS.get(source)
    if committed is None or highest > committed:
        COMMITTED_CLOCK_READINGS[source] = highest


def _noop() -> None:
    return None


def _instance_value(obj: Any, name: str) -> Any:
    """``obj.__dict__[name]``, or DELETED when the instance has no value of its own."""
    values = getattr(obj, "__dict__", None)
    if values is not None and name in values:
        return values[name]
    return DELETED


def class_attribute_bound(value: Any, instance: Any, owner: type) -> Any:
    """A class attribute as Python hands it out: through its ``__get__``, if any."""
    getter = getattr(type(value), "__get__", None)
    return value if getter is None else getter(value, instance, owner)


def _changed_keys(log: ContainerLog) -> tuple[list, set]:
    """The keys a dict's log changes (in publishing order), and those that must move.

    With a private copy, key order is state too: from the first key whose
    position differs between the dict and the copy, every key is moved
    (deleted and set again) so that the dict ends in the copy's order, as
    a serial run would leave it.
    """
    if log.shadow is None:
        return list(log.writes), set()
    real, shadow = log.real, log.shadow
    # (Whole-dict steps at C speed where they can be: a big dict the section
    # wrote a key of must not cost a Python loop over every key.)
    removed = list(real.keys() - shadow.keys())        # (deletion order is no state)
    surviving = [key for key in real if key in shadow] if removed else list(real)
    order = list(shadow)
    # Compared by identity: a key the section deleted and set again as an
    # equal but distinct object (1 then 1.0) is the new object in a serial
    # run, so it moves too.
    if list(map(id, order[:len(surviving)])) == list(map(id, surviving)):
        first = len(surviving)
    else:
        first = next((i for i, (a, b) in enumerate(zip(surviving, order)) if a is not b),
                     len(surviving))
    tail = order[first:]
    in_tail = set(tail)
    moved = in_tail & set(surviving)
    if log.whole:
        changed = [key for index, key in enumerate(order)
                   if index >= first or key not in real or real[key] is not shadow[key]]
    else:
        # keys written in place before ``first``, then every key from it on
        changed = [key for key in log.dirty if key in shadow and key not in in_tail] + tail
    return removed + changed, moved


def _publish_attr(obj: Any, name: str, value: Any) -> None:
    # The value is what the section's own code stored: a metaclass's
    # __setattr__ ran then, in the section (its store is the one logged); it
    # must not run again here (type's, not setattr()).
    is_class = isinstance(obj, type)
    if value is DELETED:
        # The section saw a value of the instance's own (delete_attr checked);
        # never raise half-way through a publication.
        try:
            (type.__delattr__ if is_class else object.__delattr__)(obj, name)
        except AttributeError:
            pass
    else:
        (type.__setattr__ if is_class else object.__setattr__)(obj, name, value)


def _publish_container(log: ContainerLog, changed_keys: Optional[tuple[list, set]]) -> None:
    """Publish one container's log; ``changed_keys`` is ``_changed_keys(log)`` for a dict."""
    real = log.real
    if log.shadow is None:                       # a dict with per-key writes
        for key, value in log.writes.items():
            if value is DELETED:
                real.pop(key, None)
            else:
                real[key] = value
        return
    shadow = log.shadow
    if isinstance(real, list):
        real[:] = shadow
    elif isinstance(real, OrderedDict):
        real.clear()
        real.update(shadow)
    elif isinstance(real, dict):
        # Key by key, never clear(): a module's globals may be this dict,
        # and unbarriered readers (LOAD_GLOBAL) must never see it empty.
        keys, moved = changed_keys
        for key in keys:
            if key in shadow:
                if key in moved:
                    del real[key]
                real[key] = shadow[key]
            else:
                real.pop(key, None)
    elif isinstance(real, deque):
        real.clear()
        real.extend(shadow)
    else:                                        # a set
        real.difference_update(real - shadow)
        # An element the section replaced by an equal but distinct object
        # (discard(old); add(new)): update() alone would keep the old one.
        held = set(map(id, real))
        for element in [e for e in shadow if id(e) not in held and e in real]:
            real.discard(element)
        real.update(shadow)


#: Stripes written in place by the holder of W (an inevitable section, or
#: instrumented code outside sections) and still locked. Only the holder of
#: W touches it. They are released together, with one new version, when the
#: inevitable section ends or the thread gives W up: an optimistic reader
#: sees either none of those writes or all of them.
_held: set[int] = set()


#: Checks run under W just before the held stripes are released: code run in
#: place may have added keys, or changed a class, that nothing could hold
#: beforehand (:func:`reach.hold_handed_back`). Each may add to ``_held``.
_before_unlocking: list[Callable[[], None]] = []


def when_unlocking(check: Callable[[], None]) -> None:
    """Run ``check()`` (caller holds W) before the held stripes are released."""
    _before_unlocking.append(check)


def hold_lookups_in_place(d: collections.defaultdict) -> None:
    """Before C code looks keys up in a shared ``defaultdict`` in place (caller
    holds W): a missing key is inserted, past every barrier. The dict's
    stripe is held from now, and the stripes of the keys it has gained are
    held too when the section lets go."""
    if id(d) in _looked_up_in_place:
        return                  # watched already, until the stripes are released
    hold((stripe_of_object(id(d)),))
    # Copied by C code, and compared by identity: a key's own __hash__ and
    # __eq__ (application code) would run here, and plain code of another
    # thread may be inserting keys meanwhile ("changed size during iteration").
    keys_before = {id(key) for key in dict.copy(d)}
    _looked_up_in_place[id(d)] = d

    def hold_keys_gained() -> None:
        del _looked_up_in_place[id(d)]
        gained = [key for key in dict.copy(d) if id(key) not in keys_before]
        hold({stripe_of_key(id(d), key) for key in gained})    # (release_held catches)
    when_unlocking(hold_keys_gained)


#: The defaultdicts hold_lookups_in_place watches (id -> dict), until the
#: stripes are released. Only the holder of W touches it.
_looked_up_in_place: dict[int, Any] = {}


def release_held() -> None:
    """Unlock the stripes written in place so far (caller holds W, about to give it up)."""
    if _COMMIT_ONLY_HOLD[0] != WORLD_LOCK.hold_number():
        _LAST_FOREIGN_HOLD[0] = WORLD_LOCK.hold_number()
    while _before_unlocking:
        action = _before_unlocking.pop()
        try:
            action()
        except Exception:
            # (an application key's __hash__ failing while the keys gained
            # are found: which stripes changed cannot be told, so every
            # overlapping section aborts; W must be let go all the same)
            hold((RESHAPE_STRIPE,))
    if _held:
        stripes = set(_held)
        _held.clear()
        release_stripes(stripes)


def _in_instance_dict(obj: Any, name: str) -> bool:
    return name in getattr(obj, "__dict__", ())


def hold(stripes: "set[int] | tuple[int, ...]") -> None:
    """Lock stripes about to be written in place, until ``release_held`` (caller holds W)."""
    lock_stripes(stripes)
    _held.update(stripes)


_self_comparing: dict[type, bool] = {}


def _compares_itself(key: Any) -> bool:
    """True for a key whose class defines __eq__ or __hash__ in Python."""
    kind = type(key)
    answer = _self_comparing.get(kind)
    if answer is None:
        answer = _self_comparing[kind] = bool(python_methods(kind, ("__eq__", "__hash__")))
    return answer


def direct_dict_write(d: dict, key: Any, op: Any, *value: Any) -> None:
    """``op(d, key, *value)`` in place (``operator.setitem``...), with the key's and
    the dict's stripes locked."""
    direct_write((stripe_of_key(id(d), key), stripe_of_object(id(d))), op, d, key, *value)


def direct_write(stripes: "set[int] | tuple[int, ...]", op: Any, *args: Any) -> Any:
    """Run ``op(*args)``, a write in place, outside optimistic mode.

    Used by inevitable sections and by instrumented code running outside
    any section: the write is made under W with its stripes locked; they
    stay locked until the section ends or W is given up (``_held``), then
    get a new version, so optimistic sections that read an old value
    abort and none can see this write without the others.
    """
    own = not WORLD_LOCK.held_by_current_thread()
    if own:
        # Plain code of the application may borrow the W of an inevitable
        # section (one that may be waiting for it); anything else waits.
        WORLD_LOCK.acquire(plain_code=MODULE_BODY.depth > 0 and CURRENT.step is None)
    try:
        hold(stripes)
        return op(*args)
    finally:
        if own:
            WORLD_LOCK.release()
