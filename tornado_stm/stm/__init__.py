"""The STM engine: atomic sections, barriers, commit, abort and retry.

Interface for the rest of tornado-stm:

* :func:`start` makes the engine ready (special calls, C barriers); the
  entry points call it once, before application code is loaded.
* :func:`run_section(fn, args, kwargs)` runs one call as an atomic section
  (retried until it commits). On a thread holding the world lock W it
  gives W up while optimistic and ends holding W again; on other threads
  it takes W only to commit or become inevitable. Calls made while a
  section runs are plain calls.
* :func:`entry` wraps a function so that calls from outside any section
  start one (the instrumenter applies it to every application function).
* :func:`stats` returns a snapshot dict: ``commits``, ``aborts``,
  ``aborts_by_cause``, ``inevitable``, ``inevitable_by_cause``,
  ``wait_w_seconds`` and per-thread figures under ``threads``;
  :func:`reset_stats` zeroes them.
* :func:`configure_log` opens the PYPYSTM log (``$PYPYSTM`` or a given
  file; never at import, never over a user's file unless forced) and
  :func:`flush_log` flushes it; the log is also closed at exit.
* :func:`current` is the running transaction (None outside sections);
  :func:`is_atomic` tells whether the caller is inside a section;
  :func:`become_inevitable` makes the running section inevitable.

Modules: ``versions`` (clock and versioned locks), ``txn`` (transaction
descriptor and commit protocol), ``section`` (the retry loop and W),
``barriers`` (the hot path the instrumented code calls), ``policy`` (the
safe-call table), ``attrkinds`` (what an attribute access may run),
``stats``, ``log`` (the PYPYSTM writer), ``worldlock`` (W), ``registry``
(which code is instrumented). The protocol is described in ``txn``.
"""

from __future__ import annotations

import threading

from tornado_stm.stm.log import configure as configure_log
from tornado_stm.stm.log import flush_log
from tornado_stm.stm.section import (beside_the_workers, entry, finalizer_safe_lock,
                                     run_deferred_finalizers, run_section)
from tornado_stm.stm.stats import reset as reset_stats
from tornado_stm.stm.stats import snapshot as stats
from tornado_stm.stm.txn import AbortSection, current
from tornado_stm.stm.worldlock import WORLD_LOCK

__all__ = ["AbortSection", "WORLD_LOCK", "become_inevitable", "configure_log",
           "current", "entry", "flush_log", "is_atomic", "reset_stats", "run_section", "start",
           "stats"]


def is_atomic() -> bool:
    """True inside an atomic section."""
    return current() is not None


def become_inevitable(cause: str = "requested") -> None:
    """Make the running section inevitable (no-op outside sections)."""
    tx = current()
    if tx is not None:
        tx.become_inevitable(cause)


_started = False
_start_lock = threading.Lock()


def start() -> None:
    """Make the engine ready; entry points call it before any application code is loaded.

    It reads ``$TORNADO_STM_FAULTS`` (:mod:`.faults`) and
    ``$TORNADO_STM_MAX_ABORTS`` (:mod:`.section`), enters the builtins
    that act like barriers in the policy table
    (:mod:`.specials`), reads the user's policy file
    (``$TORNADO_STM_POLICY``), has ``weakref.finalize`` callbacks wait for
    the end of the section their referent died in and threads that a
    module's top-level code starts run as plain code (:mod:`.section`) and,
    when the C extension loaded, puts the C
    barriers in place of the hot Python ones (:mod:`.fastpath`). Nothing
    of this happens at import. Calling it again does nothing; preparing
    instrumented code calls it too, so that no caller can forget it.
    """
    global _started
    with _start_lock:
        if _started:
            return
        from tornado_stm.stm import barriers, fastpath, faults, policy, section, specials, txn

        faults.configure_from_environment()     # before the C barriers: faults need Python's
        section.configure_from_environment()
        # in-place writes of inevitable sections are unlocked before W is given up
        WORLD_LOCK.before_release(txn.release_held)
        section.watch_thread_starts()           # before the specials: Thread.start is one
        specials.register()
        policy.load_from_environment()
        section.watch_weakref_finalizers()
        section.watch_async_generator_shutdown()
        # (made now: first used late, at an interpreter's shutdown, the
        # imports it makes fail)
        section.codes_resuming_locally()
        fastpath.install(vars(barriers))
        txn.BARRIERS_ABOVE.call, txn.BARRIERS_ABOVE.deep_view = barriers.call, barriers.deep_view
        _started = True
