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

A holder may *lend* W to the threads it starts (``lend``/``borrow``): a
section that starts a thread and waits for it (``join()``) must not wait
for ever on a thread that needs W for its plain writes. While the holder
keeps W, a borrower takes a second lock instead, and its writes become
part of the holder's; when the holder gives W up, its loans end and the
borrowers wait for W as everyone else. An inevitable section lends W to
every thread running plain application code (``open_to_plain_code``):
a worker thread the script started before, serving a queue the section
waits on, would otherwise wait for ever too.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Callable, Iterator, Optional


#: Seconds between two looks of plain code waiting for W at whether the
#: holder has opened it to plain code meanwhile.
_PLAIN_CODE_POLL = 0.005


class WorldLockError(RuntimeError):
    """W was taken twice by one thread, or released by a thread not holding it."""


class WorldLock:
    """A mutex that knows which thread holds it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        #: Bumped at each acquire(): which hold of W a loan belongs to.
        self._hold = 0
        #: Loans: the idents of the threads that may borrow this hold of W.
        self._borrowers: set[int] = set()
        self._loan = threading.Lock()        # one borrower at a time; guards _borrowers
        self._borrower: Optional[int] = None
        #: True while the holder lets every thread running plain application
        #: code borrow W (open_to_plain_code); guarded by _loan.
        self._open_to_plain = False
        self._switches: list[tuple[Callable[[], object], Callable[[object], None]]] = []
        self._before_release: list[Callable[[], None]] = []

    def acquire(self, on_wait: Optional[Callable[[], None]] = None,
                on_done: Optional[Callable[[], None]] = None, plain_code: bool = False) -> None:
        """Take W, blocking. ``on_wait``/``on_done`` run around a blocking wait.

        The hooks let the STM log ``WAIT_OTHER_INEVITABLE``/``WAIT_DONE``
        only when the thread really waited. ``plain_code``: the caller runs
        plain application code (not a section, not framework code), which
        borrows W from a holder open to it, even one that opens while the
        caller waits.
        """
        if self.held_by_current_thread():
            raise WorldLockError("the world lock is already held by this thread")
        if (self._borrowers or self._open_to_plain) and self._borrow(plain_code):
            return
        if not self._lock.acquire(blocking=False):
            if on_wait is not None:
                on_wait()
            if plain_code:
                while not self._lock.acquire(timeout=_PLAIN_CODE_POLL):
                    if self._open_to_plain and self._borrow(plain_code):
                        if on_done is not None:
                            on_done()
                        return
            else:
                self._lock.acquire()
            if on_done is not None:
                on_done()
        self._hold += 1

    # -- loans ---------------------------------------------------------------

    def lend(self) -> int:
        """By the holder, for a thread it is starting: a token for ``borrow``."""
        if not self.held_by_current_thread():
            raise WorldLockError("the world lock is lent by a thread that does not hold it")
        return self._hold

    def borrow(self, loan: int) -> None:
        """On the started thread: from now on, while the hold ``loan`` lasts,
        acquire() borrows W. Nothing, if the lender has given W up already."""
        with self._loan:
            if self._hold == loan and self.locked():
                self._borrowers.add(threading.get_ident())

    def stop_borrowing(self) -> None:
        """On a borrower whose lent work is over (a pool's task): from now on
        this thread waits for W as everyone else, whatever it runs next."""
        with self._loan:
            self._borrowers.discard(threading.get_ident())

    def open_to_plain_code(self) -> None:
        """By the holder, an inevitable section: until it gives W up, threads
        running plain application code borrow it (see ``acquire``). Nothing
        on a thread that does not hold W (a test that made W a no-op)."""
        if self.held_by_current_thread():
            self._open_to_plain = True

    def _borrow(self, plain_code: bool = False) -> bool:
        me = threading.get_ident()
        if me not in self._borrowers and not (plain_code and self._open_to_plain):
            return False
        self._loan.acquire()
        if me in self._borrowers or (plain_code and self._open_to_plain):
            self._borrower = me
            return True
        self._loan.release()                # the loan ended meanwhile
        return False

    def _end_loans(self) -> None:
        with self._loan:                    # after the borrower's write in progress
            self._borrowers.clear()
            self._open_to_plain = False

    def before_release(self, hook: Callable[[], None]) -> None:
        """Run ``hook()`` each time W is released, still holding it (the STM
        unlocks the stripes its holder wrote in place)."""
        self._before_release.append(hook)

    def release(self) -> None:
        if self._borrower is not None and self._borrower == threading.get_ident():
            # The lender's hold goes on: its stripes stay held.
            self._borrower = None
            self._loan.release()
            return
        if not self._lock._is_owned():  # type: ignore[attr-defined]
            raise WorldLockError("the world lock is released by a thread that does not hold it")
        if self._borrowers or self._open_to_plain:
            self._end_loans()
        try:
            for hook in self._before_release:
                hook()
        finally:
            # (a hook that raised must not leave W held: every thread would wait)
            self._lock.release()

    @contextlib.contextmanager
    def held_for_the_block(self) -> Iterator[None]:
        """Hold W for a ``with`` block: taken at its start unless this thread
        holds it already, and then given back at its end."""
        took = not self.held_by_current_thread()
        if took:
            self.acquire()
        try:
            yield
        finally:
            if took:
                self.release()

    def hold_number(self) -> int:
        """Which hold of W this is: 1 for the first acquire(), and so on (loans are part of the lender's)."""
        return self._hold

    def held_by_current_thread(self) -> bool:
        return self._lock._is_owned() or (  # type: ignore[attr-defined]
            self._borrower is not None and self._borrower == threading.get_ident())

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
