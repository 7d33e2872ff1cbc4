"""Coroutines and generators over shared state, stepped by event loops on several threads."""

from __future__ import annotations

import asyncio

from tests.stm import helpers

TABLE = {"n": 0}


def reset() -> None:
    TABLE["n"] = 0


async def bump_across_a_pause() -> None:
    """Read, let the test try to run another step, then write: one step, so atomic."""
    seen = TABLE["n"]
    helpers.pause()
    TABLE["n"] = seen + 1


async def bump() -> None:
    seen = TABLE["n"]
    TABLE["n"] = seen + 1


async def bump_many(times: int) -> None:
    """Many steps, each a read-then-write, with a suspension between steps."""
    for _ in range(times):
        seen = TABLE["n"]
        TABLE["n"] = seen + 1
        await asyncio.sleep(0)


def bump_in_steps(times: int):
    """The same as a generator, driven by next() from plain code."""
    for _ in range(times):
        seen = TABLE["n"]
        TABLE["n"] = seen + 1
        yield seen


async def numbers(limit: int):
    for value in range(limit):
        TABLE["n"] += 1
        yield value


# -- steps take W at their first barrier that may touch shared state ----------

import threading  # noqa: E402

LOCK = threading.Lock()
WALLS = [0]


class Tally:
    def __init__(self) -> None:
        self.n = 0


TALLY = Tally()
COUNT = 0


def crunch(limit: int) -> int:
    """Arithmetic on locals and a list made here: no barrier takes W."""
    squares = []
    for value in range(limit):
        squares.append(value * value)
    return len(squares)


async def compute_then_return(limit: int) -> int:
    await asyncio.sleep(0)
    return crunch(limit)


async def compute_then_bump_each_way(limit: int) -> None:
    """After the await: compute without W, then a read-modify-write of shared
    state through one kind of barrier each (subscript, attribute, global, a
    method of a shared list, augmented assignment, and a lock)."""
    global COUNT
    await asyncio.sleep(0)
    crunch(limit)
    seen = TABLE["n"]
    crunch(limit)
    TABLE["n"] = seen + 1
    await asyncio.sleep(0)
    crunch(limit)
    TALLY.n += 1
    await asyncio.sleep(0)
    crunch(limit)
    COUNT += 1
    await asyncio.sleep(0)
    crunch(limit)
    WALLS.append(len(WALLS))
    await asyncio.sleep(0)
    crunch(limit)
    with LOCK:
        here = WALLS[0]
        crunch(limit)
        WALLS[0] = here + 1


def reset_each_way() -> None:
    global COUNT
    TABLE["n"] = 0
    TALLY.n = 0
    COUNT = 0
    WALLS[:] = [0]


def each_way() -> dict:
    return {"table": TABLE["n"], "tally": TALLY.n, "count": COUNT,
            "appended": len(WALLS) - 1, "locked": WALLS[0]}


# -- obj.method(args) in a step: the method is looked up at the call ----------

class Ledger:
    """A shared object whose method steps call with what they computed."""

    def __init__(self) -> None:
        self.entries: list = []

    def record(self, value: object) -> None:
        self.entries.append(value)


#: Set by the tests to end spin_until_stopped (read plainly: never assigned in a function here).
STOP_SPINNING = False


def spin_until_stopped() -> int:
    """Counts until the test sets STOP_SPINNING: arithmetic on locals and a
    plainly read global, so no barrier takes W meanwhile."""
    count = 0
    while not STOP_SPINNING:
        count += 1
    return count


async def compute_then_record(ledger: Ledger) -> None:
    await asyncio.sleep(0)
    ledger.record(spin_until_stopped())


async def call_a_missing_method(ledger: Ledger) -> list:
    """plain Python fails the lookup before computing the argument."""
    await asyncio.sleep(0)
    try:
        ledger.missing(ledger.record("argument computed"))
    except AttributeError:
        pass
    return ledger.entries


async def record_what_is_awaited(ledger: Ledger, gate: "asyncio.Future") -> None:
    """plain Python looks ``record`` up before the await, in the first step."""
    ledger.record(await gate)


def _replacement(self: Ledger, value: object) -> None:
    self.entries.append(("replacement", value))


def rebind_record() -> str:
    """Rebinds ``Ledger.record`` (shared state: the step takes W here)."""
    Ledger.record = _replacement
    return "argument"


async def call_what_the_arguments_rebind(ledger: Ledger) -> None:
    """plain Python calls the ``record`` found before its argument rebinds it."""
    await asyncio.sleep(0)
    ledger.record(rebind_record())


def spin_then_note(ledger: Ledger) -> int:
    """Computes, then writes shared state (the step takes W there)."""
    total = spin_until_stopped()
    ledger.entries.append("argument's write")
    return total


async def record_what_is_computed_and_noted(ledger: Ledger) -> str:
    await asyncio.sleep(0)
    try:
        ledger.record(spin_then_note(ledger))
    except AttributeError:
        return "AttributeError"
    return "called"


async def abandon_a_call_then_write(ledger: Ledger) -> str:
    """A put-off lookup whose call never comes (its argument raised)."""
    await asyncio.sleep(0)
    zero = 0
    try:
        ledger.record(1 // zero)          # (arithmetic on numbers: no W yet)
    except ZeroDivisionError:
        pass
    spin_until_stopped()
    ledger.entries.append("written")
    return "done"


def closes_with_a_value():
    try:
        yield 1
    except GeneratorExit:
        return 42


async def a_stream():
    yield 1
