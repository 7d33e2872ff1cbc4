"""The world lock W: one owner at a time, known from the moment W is taken."""

from __future__ import annotations

import threading

import pytest

from tornado_stm.stm.worldlock import WorldLock, WorldLockError


def test_w_is_not_reentrant_and_only_its_owner_releases_it() -> None:
    lock = WorldLock()
    lock.acquire()
    assert lock.held_by_current_thread()
    with pytest.raises(WorldLockError, match="already held"):
        lock.acquire()
    lock.release()
    assert not lock.held_by_current_thread()
    with pytest.raises(WorldLockError, match="does not hold"):
        lock.release()


def test_code_run_just_after_w_is_taken_sees_w_held() -> None:
    """A finalizer can run at any bytecode, also the first after the lock is
    taken (here: the on_done hook). If "do I hold W?" were still False there,
    the finalizer's write would take W again and wait for its own thread for
    ever (a hang seen on 2 threads, 2026-11-24)."""
    lock = WorldLock()
    waiting = threading.Event()
    seen: list[bool] = []

    def take_it_after_a_wait() -> None:
        lock.acquire(on_wait=waiting.set,
                     on_done=lambda: seen.append(lock.held_by_current_thread()))
        lock.release()

    lock.acquire()
    waiter = threading.Thread(target=take_it_after_a_wait)
    waiter.start()
    assert waiting.wait(10)
    lock.release()
    waiter.join(10)
    assert not waiter.is_alive() and seen == [True]


def test_a_thread_borrows_w_while_its_lender_holds_it() -> None:
    """A holder waiting for a thread it started (``join()`` in an inevitable
    section) lends it W: the thread takes W while the holder keeps it, and
    its release does not end the holder's hold nor run the release hooks."""
    lock = WorldLock()
    hooks: list[str] = []
    lock.before_release(lambda: hooks.append("released"))
    lock.acquire()
    loan = lock.lend()
    seen: list[object] = []

    def borrower() -> None:
        lock.borrow(loan)
        lock.acquire()
        seen.append(lock.held_by_current_thread())
        lock.release()
        seen.append(lock.held_by_current_thread())

    thread = threading.Thread(target=borrower)
    thread.start()
    thread.join(10)
    assert not thread.is_alive() and seen == [True, False]
    assert lock.held_by_current_thread() and hooks == []
    lock.release()
    assert hooks == ["released"]


def test_a_loan_ends_when_the_lender_gives_w_up() -> None:
    """After the lender's release, the borrower waits for W as anyone else;
    a loan taken up after the lender's release is no loan at all."""
    lock = WorldLock()
    lock.acquire()
    loan = lock.lend()
    borrowed = threading.Event()
    go_on = threading.Event()
    order: list[str] = []

    def borrower() -> None:
        lock.borrow(loan)
        borrowed.set()
        go_on.wait(10)
        lock.acquire()          # the loan is over: waits for the second holder
        order.append("borrower")
        lock.release()

    thread = threading.Thread(target=borrower)
    thread.start()
    assert borrowed.wait(10)
    lock.release()              # ends the loan
    lock.acquire()              # a new hold, lent to no one
    go_on.set()
    thread.join(0.2)
    assert thread.is_alive(), "the borrower took W from a hold that was not lent to it"
    order.append("holder")
    lock.release()
    thread.join(10)
    assert order == ["holder", "borrower"]

    late = WorldLock()
    late.acquire()
    stale = late.lend()
    late.release()
    late.borrow(stale)          # the lender is gone: nothing to borrow
    late.acquire()
    assert late.held_by_current_thread()
    late.release()


def test_plain_code_borrows_w_from_a_holder_open_to_it_even_while_waiting() -> None:
    """An inevitable section opens its W to threads running plain code (a
    worker thread it waits for): one already waiting for W when it opens
    borrows it too; framework code (acquire without plain_code) still waits,
    and the opening ends with the hold."""
    lock = WorldLock()
    lock.acquire()
    order: list[str] = []

    def plain_writer() -> None:
        lock.acquire(plain_code=True)
        order.append("plain")
        lock.release()

    def framework() -> None:
        lock.acquire()
        order.append("framework")
        lock.release()

    writer = threading.Thread(target=plain_writer)
    other = threading.Thread(target=framework)
    writer.start()
    other.start()
    writer.join(0.1)
    assert writer.is_alive(), "plain code took W from a holder not open to it"
    lock.open_to_plain_code()
    writer.join(10)
    assert not writer.is_alive() and order == ["plain"]
    other.join(0.1)
    assert other.is_alive(), "framework code borrowed W"
    lock.release()                  # ends the opening: the framework thread goes
    other.join(10)
    assert order == ["plain", "framework"]
    lock.acquire()                  # a new hold, not open: plain code waits again
    late = threading.Thread(target=plain_writer)
    late.start()
    late.join(0.1)
    assert late.is_alive()
    lock.release()
    late.join(10)
    assert order == ["plain", "framework", "plain"]
