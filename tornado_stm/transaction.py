"""PyPy-STM's ``transaction`` module, on our STM engine.

Scripts written for PyPy-STM run unchanged (``tornado-stm exec
script.py`` makes ``import transaction`` resolve here)::

    import transaction
    for item in work:
        transaction.add(process, item)     # each call: one atomic section
    transaction.run()                      # on N threads; returns when all are done

API: ``add``, ``run``, ``set_num_threads``, ``number_of_transactions_in_last_run``,
``TransactionQueue`` (``add``, ``add_generator``, ``run(nb_segments=0)``),
``atomic``, ``exclusive_atomic``, ``is_atomic``, ``hint_commit_soon``,
``getsegmentlimit``, ``time``, ``clock``, ``count``, ``stmdict``, ``stmset``,
``stmidset``, ``stmiddict``, ``threadlocalproperty``, ``TransactionError``.

Backends, chosen by ``$TORNADO_STM_BACKEND`` or :func:`set_backend`:

``stm`` (the default here)
    every added call runs as an atomic section of our engine on worker threads;
``serial``
    every added call runs in order on the calling thread (reference runs);
``pypystm``
    on PyPy-STM itself, PyPy's native ``transaction`` module does the work
    (the default when it is importable).

Semantics as in PyPy-STM: calls added while ``run()`` runs are run by the
same ``run()`` (an ``add`` inside a section takes effect when the section
commits); ``run()`` inside a running ``run()`` raises ``TransactionError``;
the first exception cancels the calls not started yet and is re-raised
by ``run()``. Each step of a generator given to ``add_generator`` is one
transaction; generator frames cannot be rolled back, so those steps run
inevitably (see docs/semantics.md).
"""

from __future__ import annotations

import collections
import itertools
import logging
import os
import sys
import threading
import time as _time
from typing import Any, Callable, Generator, Iterable, Optional

from tornado_stm import run_context, stm
from tornado_stm.stm import barriers
from tornado_stm.stm import log as stmlog
from tornado_stm.stm.bindings import audit_module_classes
from tornado_stm.stm.registry import VERSIONED_MODULES
from tornado_stm.stm.txn import current as _current_tx
from tornado_stm.stm.worldlock import WORLD_LOCK

BACKENDS = ("stm", "serial", "pypystm")

_logger = logging.getLogger(__name__)


class TransactionError(Exception):
    """Misuse of the transaction API (e.g. ``run()`` inside ``run()``)."""


def _native() -> Optional[Any]:
    """PyPy-STM's own ``transaction`` module, when running on PyPy-STM."""
    if sys.implementation.name != "pypy":
        return None
    try:
        import pypystm  # noqa: F401  (a built-in module only on PyPy-STM)
        import transaction as native
    except ImportError:
        return None
    return None if native is sys.modules[__name__] else native


def _initial_backend() -> str:
    wanted = os.environ.get("TORNADO_STM_BACKEND", "").strip().lower()
    if wanted and wanted not in BACKENDS:
        raise TransactionError(f"TORNADO_STM_BACKEND={wanted!r}: expected one of "
                               f"{', '.join(BACKENDS)}")
    if wanted == "pypystm" and _native() is None:
        raise TransactionError("TORNADO_STM_BACKEND=pypystm: PyPy-STM's transaction module "
                               "is not available on this interpreter")
    return wanted or ("pypystm" if _native() is not None else "stm")


#: The chosen backend; None until set_backend() or the first run(), which
#: takes $TORNADO_STM_BACKEND (checked then, not at import).
_backend: Optional[str] = None


def set_backend(name: str) -> None:
    """Choose the backend: ``"stm"``, ``"serial"`` or ``"pypystm"``."""
    global _backend
    if name not in BACKENDS:
        raise TransactionError(f"backend {name!r}: expected one of {', '.join(BACKENDS)}")
    if name == "pypystm" and _native() is None:
        raise TransactionError("backend 'pypystm' needs PyPy-STM")
    _backend = name


def get_backend() -> str:
    """The backend ``run()`` uses: the one set, else ``$TORNADO_STM_BACKEND``'s, else the default."""
    global _backend
    if _backend is None:
        _backend = _initial_backend()
    return _backend


# -- small built-ins ------------------------------------------------------------

def getsegmentlimit() -> int:
    """How many transactions can run at once: the number of CPUs."""
    return os.cpu_count() or 1


def hint_commit_soon() -> None:
    """Accepted for compatibility; sections here commit when the call returns."""


def time() -> float:
    """Wall-clock time; never a conflict, never makes the section inevitable."""
    return _time.time()


def clock() -> float:
    """A monotonic clock in seconds; never a conflict."""
    return _time.perf_counter()


_counter = itertools.count(1)
_counter_lock = threading.Lock()


def count() -> int:
    """Distinct increasing integers, without conflicts between sections."""
    with _counter_lock:
        return next(_counter)


_atomic_depth = threading.local()


def is_atomic() -> bool:
    """True inside an atomic section or an ``atomic`` block."""
    return _current_tx() is not None or getattr(_atomic_depth, "depth", 0) > 0


class _AtomicBlock:
    """``with atomic:`` -- the block runs as one transaction.

    Inside a section the block is already atomic. Outside one, the block
    holds the world lock W, which no section can commit without: the
    block appears atomic to every section (and serializes with them).
    ``exclusive_atomic`` additionally makes a running section inevitable.
    """

    def __init__(self, exclusive: bool) -> None:
        self.exclusive = exclusive

    def __enter__(self) -> "_AtomicBlock":
        depth = getattr(_atomic_depth, "depth", 0)
        tx = _current_tx()
        if tx is not None:
            if self.exclusive:
                tx.become_inevitable("exclusive_atomic")
        elif depth == 0 and not WORLD_LOCK.held_by_current_thread():
            WORLD_LOCK.acquire()
            _atomic_depth.took_w = True
        _atomic_depth.depth = depth + 1
        return self

    def __exit__(self, *exc_info: object) -> None:
        _atomic_depth.depth -= 1
        if _atomic_depth.depth == 0 and getattr(_atomic_depth, "took_w", False):
            _atomic_depth.took_w = False
            WORLD_LOCK.release()


atomic = _AtomicBlock(exclusive=False)
exclusive_atomic = _AtomicBlock(exclusive=True)
single_transaction = exclusive_atomic


# -- data types -----------------------------------------------------------------

class stmdict(dict):
    """A dict for shared use (the engine already tracks dicts per key)."""


class stmset(set):
    """A set for shared use."""


class stmiddict(dict):
    """A dict whose keys compare by identity."""

    def __getitem__(self, key: Any) -> Any:
        return dict.__getitem__(self, id(key))[1]

    def __setitem__(self, key: Any, value: Any) -> None:
        dict.__setitem__(self, id(key), (key, value))

    def __delitem__(self, key: Any) -> None:
        dict.__delitem__(self, id(key))

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, id(key))

    def get(self, key: Any, default: Any = None) -> Any:
        pair = dict.get(self, id(key))
        return default if pair is None else pair[1]

    def keys(self) -> list:  # type: ignore[override]
        return [pair[0] for pair in dict.values(self)]

    def values(self) -> list:  # type: ignore[override]
        return [pair[1] for pair in dict.values(self)]

    def items(self) -> list:  # type: ignore[override]
        return list(dict.values(self))

    def __iter__(self):
        return iter(self.keys())


class stmidset:
    """A set whose members compare by identity.

    Its methods are uninstrumented: inside a section, reading it is pure
    and changing it makes the section inevitable (correct, but serial).
    """

    def __init__(self, items: Iterable = ()) -> None:
        self._objects: dict[int, Any] = {}
        for item in items:
            self.add(item)

    def add(self, item: Any) -> None:
        self._objects[id(item)] = item

    def discard(self, item: Any) -> None:
        self._objects.pop(id(item), None)

    def remove(self, item: Any) -> None:
        if id(item) not in self._objects:
            raise KeyError(item)
        del self._objects[id(item)]

    def __contains__(self, item: object) -> bool:
        return id(item) in self._objects

    def __len__(self) -> int:
        return len(self._objects)

    def __iter__(self):
        return iter(list(self._objects.values()))


class threadlocalproperty:
    """A class attribute whose value is per thread (and per instance)."""

    def __init__(self, default_factory: Optional[Callable[[], Any]] = None) -> None:
        self.default_factory = default_factory
        self.local = threading.local()

    def _values(self) -> dict:
        values = getattr(self.local, "values", None)
        if values is None:
            values = self.local.values = {}
        return values

    def __get__(self, obj: Any, owner: type = None) -> Any:
        if obj is None:
            return self
        values = self._values()
        try:
            return values[id(obj)]
        except KeyError:
            if self.default_factory is None:
                raise AttributeError("threadlocalproperty has no value in this thread") from None
            value = values[id(obj)] = self.default_factory()
            return value

    def __set__(self, obj: Any, value: Any) -> None:
        self._values()[id(obj)] = value

    def __delete__(self, obj: Any) -> None:
        self._values().pop(id(obj), None)


# -- the queue --------------------------------------------------------------------

_running = threading.local()
_num_threads = [getsegmentlimit()]
_last_count = [0]


def set_num_threads(number: int) -> None:
    """How many threads ``run()`` uses (default: ``getsegmentlimit()``)."""
    if int(number) < 1:
        raise TransactionError(f"set_num_threads({number!r}): needs at least 1 thread")
    _num_threads[0] = int(number)


def number_of_transactions_in_last_run() -> int:
    return _last_count[0]


class TransactionQueue:
    """A queue of calls, each run as one transaction by :meth:`run`."""

    def __init__(self) -> None:
        self._pending: collections.deque = collections.deque()
        # (a __del__ may call add() on a thread inside a ``with self._lock:``)
        self._lock = stm.finalizer_safe_lock()
        self._idle = threading.Condition(self._lock)
        self._busy = 0
        self._live_workers = 0
        self._in_transaction: set[int] = set()  # threads running an added call
        self._error: Optional[BaseException] = None
        self._ending = _Ending()
        self.number_of_transactions = 0

    def add(self, f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Queue ``f(*args, **kwargs)``; inside a section, when it commits."""
        item = (f, args, kwargs)
        tx = _current_tx()
        if tx is not None:
            tx.at_its_end(lambda: self._push(item))
        else:
            self._push(item)

    def add_generator(self, generator: Generator) -> None:
        """Queue a generator: each step up to the next ``yield`` is one transaction."""
        self.add(_GeneratorStep(self, generator))

    def _push(self, item: tuple) -> None:
        with self._lock:
            self._pending.append(item)
            self._idle.notify()

    def run(self, nb_segments: int = 0) -> None:
        """Run every queued call (and those they add); re-raise the first exception."""
        if getattr(_running, "queue", None) is not None or _current_tx() is not None:
            raise TransactionError("run() cannot be called inside a running transaction.run()")
        backend = get_backend()
        native = _native() if backend == "pypystm" else None
        if native is not None:
            return self._run_native(native, nb_segments)
        # Inside ``with atomic:`` (which holds W) the calls run one after
        # another on this thread: the block is one transaction, and workers
        # could never commit while it lasts.
        threads = 1 if backend == "serial" or getattr(_atomic_depth, "depth", 0) > 0 \
            else (nb_segments or _num_threads[0])
        stmlog.open_from_environment()  # $PYPYSTM, when no command opened the log
        for module in list(VERSIONED_MODULES):
            audit_module_classes(module)    # what the script set up plainly (bindings)
        self._error = None
        self._ending = _Ending()
        self.number_of_transactions = 0
        # This thread is in the run too: a finalizer that runs on it meanwhile
        # (an object the script made, dropped by a call) adds to this queue.
        _running.queue = self
        try:
            with stm.beside_the_workers():
                self._run_workers(threads)
        finally:
            _running.queue = None
        _last_count[0] = self.number_of_transactions
        if self._error is not None:
            # (calls queued by a call that committed just before the raising
            # one may have landed after it emptied the queue: dropped too)
            with self._lock:
                self._pending.clear()
            error, self._error = self._error, None
            raise error

    def _run_workers(self, threads: int) -> None:
        """Run the queue on ``threads`` threads (this one, if 1) until it is empty."""
        if threads == 1:
            self._worker()
        else:
            # Each worker runs in a copy of this thread's context, brought up
            # to date before each call: one chain of context variables, as
            # the calls of a serial run share this thread's (run_context).
            context = run_context.RunContext()
            while True:
                self._run_worker_threads(context, threads)
                # A finalizer that ran on this thread as the last calls ended
                # (an object the script made, dropped by a call) may have
                # queued calls: the run goes on with them.
                stm.run_deferred_finalizers()
                with self._lock:
                    if not self._pending or self._error is not None:
                        break
            context.hand_back()

    def _run_worker_threads(self, context: run_context.RunContext, threads: int) -> None:
        """Start ``threads`` workers in ``context`` and wait until they have all stopped."""
        # Daemon threads: after a Ctrl-C, a transaction that cannot be
        # interrupted must not keep the process alive.
        workers = [threading.Thread(target=context.worker(self._worker),
                                    name=f"transaction-{i}", daemon=True)
                   for i in range(threads)]
        self._live_workers = threads
        for worker in workers:
            worker.start()
        try:
            for worker in workers:
                # In short waits: the kernel may hand a Ctrl-C to a worker
                # thread, and the main thread runs Python's handler only
                # when it comes back from the wait.
                while worker.is_alive():
                    worker.join(self.SIGNAL_POLL_SECONDS)
                    stm.run_deferred_finalizers()
        except BaseException as exc:  # KeyboardInterrupt, on the main thread
            self._interrupt(workers, exc)
            raise

    #: How often run()'s main thread looks for a signal another thread received.
    SIGNAL_POLL_SECONDS = 0.1

    #: After a Ctrl-C, how long run() waits for interrupted transactions to stop.
    INTERRUPT_GRACE_SECONDS = 1.0

    def _interrupt(self, workers: list[threading.Thread], exc: BaseException) -> None:
        """Ctrl-C during run(): take no new transaction, interrupt the running ones.

        The transactions running on the workers get a KeyboardInterrupt
        raised in them (as Ctrl-C does on the main thread), which stops
        anything running Python code; one stuck elsewhere (a C call, a
        lock) is abandoned on its daemon thread, and a warning says so.
        """
        with self._lock:
            if self._error is None:
                self._error = exc
            self._pending.clear()
            self._idle.notify_all()
            # Only in threads inside a transaction (they leave it under this
            # lock): an idle worker just returns, and one that has left
            # _work() must not be hit.
            for ident in self._in_transaction:
                _raise_in_thread(ident, KeyboardInterrupt)
        # Not Thread.join()/is_alive(): after a join interrupted by Ctrl-C,
        # 3.11 may report the joined thread stopped while it still runs.
        deadline = _time.monotonic() + self.INTERRUPT_GRACE_SECONDS
        with self._lock:
            while self._live_workers and _time.monotonic() < deadline:
                self._idle.wait(max(0.0, deadline - _time.monotonic()))
            left = self._live_workers
        if left:
            _logger.warning("interrupted: %d transaction(s) still running could not be "
                            "stopped and are abandoned on daemon worker threads", left)
        _last_count[0] = self.number_of_transactions

    def _take(self) -> Optional[tuple]:
        with self._lock:
            while True:
                if self._error is not None:
                    return None
                if self._pending:
                    self._busy += 1
                    # In the same hold of the lock: _interrupt() must see
                    # every thread that holds a call as in a transaction.
                    self._in_transaction.add(threading.get_ident())
                    return self._pending.popleft()
                if self._busy == 0:
                    self._idle.notify_all()
                    return None
                self._idle.wait()

    def _worker(self) -> None:
        _running.queue = self
        try:
            try:
                self._work()
            finally:
                _running.queue = None
                with self._lock:
                    self._live_workers -= 1
                    self._idle.notify_all()
            # _interrupt() targets only threads inside a transaction, under
            # the lock; one it raised in may see it late, even here: a
            # KeyboardInterrupt still pending is dropped, not printed as an
            # "Exception in thread".
            _raise_in_thread(threading.get_ident(), None)
        except KeyboardInterrupt:
            if self._error is None:  # not raised in this thread by _interrupt()
                raise

    def _work(self) -> None:
        while True:
            item = self._take()
            if item is None:
                # Finalizers put off while this thread held the lock may
                # add calls: the run is over only once they have run.
                if stm.run_deferred_finalizers():
                    continue
                return
            f, args, kwargs = item
            me = threading.get_ident()
            ran = True
            try:
                run_context.bring_up_to_date()
                ran = stm.run_section(_queued_call, (f, args, kwargs, self._ending)) \
                    is not _RUN_OVER
            except BaseException as exc:
                with self._lock:
                    if self._error is None:
                        self._error = exc
                        self._pending.clear()
            finally:
                with self._lock:
                    self._in_transaction.discard(me)
                    self._busy -= 1
                    self.number_of_transactions += ran
                    self._idle.notify_all()
            stm.run_deferred_finalizers()    # (put off while this thread held the lock)

    def _run_native(self, native: Any, nb_segments: int) -> None:
        queue = native.TransactionQueue()
        while self._pending:
            f, args, kwargs = self._pending.popleft()
            queue.add(f, *args, **kwargs)
        queue.run(nb_segments)


class _Ending:
    """Whether a call of this run() has raised, as shared state of the run:
    the call that raises writes it in its own section, and every call reads
    it first. So a call that overlaps the raising one and would commit after
    it aborts, and runs again as a call that finds the run ended: in every
    serial order the raising call is the last to run."""

    def __init__(self) -> None:
        self.raised = False


#: What a queued call taken after another one raised returns: it did not run
#: (and is not counted in ``number_of_transactions_in_last_run``).
_RUN_OVER = object()


def _queued_call(f: Callable[..., Any], args: tuple, kwargs: dict, ending: _Ending) -> Any:
    """A queued call, made through the call barrier: an application function
    runs as the section; a library function (``transaction.add(bisect.insort,
    lst, x)``) by its call policy, inevitably if nothing else, never as plain
    code racing the other workers. Nothing runs once a call has raised."""
    tx = _current_tx()
    if barriers.get_attr(tx, ending, "raised"):
        return _RUN_OVER
    run_context.read_in_section(tx)
    try:
        result = barriers.call(tx, f, *args, **kwargs)
    except stm.AbortSection:
        raise
    except BaseException:
        run_context.note_arithmetic(tx)
        barriers.set_attr(tx, ending, "raised", True)
        raise
    run_context.note_arithmetic(tx)
    return result


def _raise_in_thread(ident: int, exception: Optional[type]) -> None:
    """Raise ``exception`` in the thread ``ident`` when it next runs Python code
    (None: drop the one still pending there)."""
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(ident), None if exception is None else ctypes.py_object(exception))


class _GeneratorStep:
    """One step of a generator added with ``add_generator``; re-queues itself."""

    def __init__(self, queue: TransactionQueue, generator: Generator) -> None:
        self.queue = queue
        self.generator = generator

    def __call__(self) -> None:
        stm.become_inevitable("generator step (add_generator)")
        try:
            next(self.generator)
        except StopIteration:
            return
        self.queue.add(self)


_default_queue = TransactionQueue()


def add(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Queue a call on the default queue: ``run()`` will run it as one transaction."""
    queue = getattr(_running, "queue", None) or _default_queue
    queue.add(f, *args, **kwargs)


def run() -> None:
    """Run everything added with :func:`add` on ``set_num_threads()`` threads."""
    _default_queue.run()
