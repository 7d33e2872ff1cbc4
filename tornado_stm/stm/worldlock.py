"""The world lock W.

W serializes what cannot run optimistically: a section's commit, an
inevitable section (to its end), a step of an application coroutine. On
the shared event loop (``serve --loop shared``) framework code (Tornado,
asyncio, the standard library) runs under W too, one thread at a time,
exactly as on a single-threaded loop, and atomic sections release W while
they run optimistically; with one loop per thread framework code runs
without it.

W is a mutex that knows its owner, so code can ask "do I hold W?" -- the
question an atomic section asks on entry, to know whether it must give W
up and take it back afterwards. It is not re-entrant on purpose: taking W
twice on one thread is a bug in the runtime, and is reported as one.

The owner is the C lock's own (``threading.RLock``, whose re-entrancy is
never used), set in the same step as the lock is taken and cleared in the
same step as it is given back. A finalizer (``__del__``) can run at any
bytecode, right after the lock was taken too; if "do I hold W?" were a
Python field set a step later, its write would wait for W, held by its
own thread, for ever (a hang seen on 2 threads, 2026-11-24).
"""

from __future__ import annotations

import threading
from typing import Callable, Optional


class WorldLockError(RuntimeError):
    """W was taken twice by one thread, or released by a thread not holding it."""


class WorldLock:
    """A mutex that knows which thread holds it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._switches: list[tuple[Callable[[], object], Callable[[object], None]]] = []
        self._before_release: list[Callable[[], None]] = []

    def acquire(self, on_wait: Optional[Callable[[], None]] = None,
                on_done: Optional[Callable[[], None]] = None) -> None:
        """Take W, blocking. ``on_wait``/``on_done`` run around a blocking wait.

        The hooks let the STM log ``WAIT_OTHER_INEVITABLE``/``WAIT_DONE``
        only when the thread really waited.
        """
        if self._lock._is_owned():  # type: ignore[attr-defined]
            raise WorldLockError("the world lock is already held by this thread")
        if not self._lock.acquire(blocking=False):
            if on_wait is not None:
                on_wait()
            self._lock.acquire()
            if on_done is not None:
                on_done()

    def before_release(self, hook: Callable[[], None]) -> None:
        """Run ``hook()`` each time W is released, still holding it (the STM
        unlocks the stripes its holder wrote in place)."""
        self._before_release.append(hook)

    def release(self) -> None:
        if not self._lock._is_owned():  # type: ignore[attr-defined]
            raise WorldLockError("the world lock is released by a thread that does not hold it")
        for hook in self._before_release:
            hook()
        self._lock.release()

    def held_by_current_thread(self) -> bool:
        return self._lock._is_owned()  # type: ignore[attr-defined]

    def locked(self) -> bool:
        """Held by some thread (a probe: it takes W for an instant if free)."""
        if self.held_by_current_thread():
            return True
        if self._lock.acquire(blocking=False):
            self._lock.release()
            return False
        return True

    # -- leaving W in the middle of framework code ----------------------
    #
    # An atomic section starts inside framework code (a Tornado callback
    # calls an application function) and gives W up while it runs. Some
    # framework state is per loop rather than per thread -- asyncio's
    # "current task" on 3.12/3.13 -- and another thread will take W
    # meanwhile, so that state is saved and cleared on the way out and put
    # back on the way in. The event loop registers how; the STM only calls
    # suspend() and resume().

    def register_context_switch(self, save: Callable[[], object],
                                restore: Callable[[object], None]) -> None:
        """Register a pair: ``save()`` runs on suspend (its result is kept),
        ``restore(saved)`` on resume. Pairs run in registration order on
        suspend and in reverse on resume."""
        self._switches.append((save, restore))

    def suspend(self) -> list:
        """Save per-thread framework context, then release W. Returns a token for resume()."""
        token = [save() for save, _ in self._switches]
        self.release()
        return token

    def resume(self, token: list, on_wait: Optional[Callable[[], None]] = None,
               on_done: Optional[Callable[[], None]] = None) -> None:
        """Take W again and restore the context saved by suspend()."""
        self.acquire(on_wait, on_done)
        for (_, restore), saved in reversed(list(zip(self._switches, token))):
            restore(saved)

    def __enter__(self) -> "WorldLock":
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


#: The one world lock of the process.
WORLD_LOCK = WorldLock()
