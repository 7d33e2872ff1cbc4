"""The engine's settings read from the environment, and the one error they raise.

Each setting is read when :func:`tornado_stm.stm.start` runs, never at
import, so that a bad value is a one-line error from the command instead
of a traceback from an import.
"""

from __future__ import annotations

import os


class SettingError(ValueError):
    """A ``TORNADO_STM_*`` setting of the engine that cannot be understood."""


def count_from_environment(variable: str, default: int, minimum: int = 1) -> int:
    """``$variable`` as a whole number of at least ``minimum``; ``default`` when unset."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise SettingError(f"{variable}={text!r}: not a whole number") from None
    if value < minimum:
        raise SettingError(f"{variable}={text!r}: must be at least {minimum}")
    return value
