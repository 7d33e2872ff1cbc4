"""Fault injection: spurious aborts and delays at random points of the protocol.

A correct STM stays serial whatever the timing: an abort may come at any
read, a commit may be late, another thread may commit between a read and
the write that depends on it. This module makes those things happen on
purpose, so that the test suite can show it. Set, before the entry point
starts the engine (``tornado_stm.stm.start``)::

    TORNADO_STM_FAULTS="abort=0.01,delay=0.0002,seed=7"

``abort``  the probability that an optimistic read, write or commit aborts
           the section (it is retried, as after a real conflict);
``delay``  the longest random sleep, in seconds, injected at those points
           (one time in four), which widens every read-to-write window;
``seed``   makes the random draws repeatable per thread.

With faults on, the pure-Python barriers are used (the C fast path has no
injection points); never set it in production.
"""

from __future__ import annotations

import os
import random
import threading
import time
from typing import Any

from tornado_stm.stm.settings import SettingError

#: The abort cause of an injected fault (followed by where it struck).
CAUSE = "injected fault"
#: True when ``$TORNADO_STM_FAULTS`` asks for faults.
ENABLED = False
ABORT_RATE = 0.0
MAX_DELAY = 0.0
_SEED: int | None = None


class FaultSpecError(SettingError):
    """``$TORNADO_STM_FAULTS`` cannot be understood."""


def configure(spec: str) -> None:
    """Set the fault rates from a spec such as ``"abort=0.01,delay=0.0002"`` ('' turns off)."""
    global ENABLED, ABORT_RATE, MAX_DELAY, _SEED
    abort, delay, seed = 0.0, 0.0, None
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, value = part.partition("=")
        try:
            if name == "abort":
                abort = float(value)
            elif name == "delay":
                delay = float(value)
            elif name == "seed":
                seed = int(value)
            else:
                raise FaultSpecError(f"TORNADO_STM_FAULTS: unknown setting {name!r} "
                                     f"(expected abort, delay, seed)")
        except ValueError as exc:
            if isinstance(exc, FaultSpecError):
                raise
            raise FaultSpecError(f"TORNADO_STM_FAULTS: {part!r} needs a number") from None
    if not 0.0 <= abort < 1.0 or delay < 0.0:
        raise FaultSpecError(f"TORNADO_STM_FAULTS: {spec!r}: abort must be in [0, 1), delay >= 0")
    ABORT_RATE, MAX_DELAY, _SEED = abort, delay, seed
    ENABLED = abort > 0.0 or delay > 0.0


class _Draws(threading.local):
    def __init__(self) -> None:
        seed = None if _SEED is None else _SEED * 1_000_003 + threading.get_ident() % 1_000_003
        self.rng = random.Random(seed)


_draws = _Draws()


def strike(tx: Any, where: str) -> None:
    """At an injection point of an optimistic section: maybe sleep, maybe abort."""
    rng = _draws.rng
    if MAX_DELAY and rng.random() < 0.25:
        time.sleep(rng.uniform(0.0, MAX_DELAY))
    if ABORT_RATE and not tx.inevitable and rng.random() < ABORT_RATE:
        tx.abort(f"{CAUSE} at {where}")


def configure_from_environment() -> None:
    """Read ``$TORNADO_STM_FAULTS`` (:func:`tornado_stm.stm.start` does, once)."""
    configure(os.environ.get("TORNADO_STM_FAULTS", ""))
