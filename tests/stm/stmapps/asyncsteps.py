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
