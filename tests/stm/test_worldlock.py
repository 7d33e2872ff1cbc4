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
