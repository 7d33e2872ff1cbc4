"""Uninstrumented helpers for the STM tests (registered as pure in the policy)."""

from __future__ import annotations

import threading

#: pause() blocks until this is set, when armed; tests use it to let another
#: thread commit in the middle of a section.
_gate: threading.Event | None = None
_reached = threading.Event()


def arm() -> None:
    global _gate
    _gate = threading.Event()
    _reached.clear()


def pause() -> None:
    gate = _gate
    if gate is not None and not gate.is_set():
        _reached.set()
        gate.wait(10)


def wait_until_paused(timeout: float = 10) -> bool:
    return _reached.wait(timeout)


def release() -> None:
    if _gate is not None:
        _gate.set()


def disarm() -> None:
    global _gate
    _gate = None


def run_threads(count: int, target, *args) -> None:
    """Start ``count`` threads running ``target(index, *args)`` and join them."""
    errors: list[BaseException] = []

    def body(index: int) -> None:
        try:
            target(index, *args)
        except BaseException as exc:      # reported to the test below
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    if errors:
        raise errors[0]
