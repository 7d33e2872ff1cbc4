"""Sections that would fail on an inconsistent view of shared state."""

from tests.stm import helpers

STATE = {"a": 0, "b": 0, "count": 0}
NAMES: dict = {}


def writer(value: int) -> None:
    STATE["a"] = value
    STATE["b"] = value


def divide_by_consistency() -> float:
    """ZeroDivisionError if a and b differ (they never do in a committed state)."""
    a = STATE["a"]
    helpers.pause()
    b = STATE["b"]
    return 1 / (1 if a == b else 0)


def add_name(name: str) -> None:
    NAMES[name] = True
    STATE["count"] += 1


def torn_count() -> int:
    """Raises ValueError if a live view of NAMES disagrees with STATE['count']."""
    view = NAMES.keys()
    count = STATE["count"]
    helpers.pause()
    if len(view) != count:
        raise ValueError(f"torn: {len(view)} names but count {count}")
    return count


def spin_until_consistent() -> int:
    """Loops while a live view disagrees with the count (forever on a torn view)."""
    view = NAMES.keys()
    count = STATE["count"]
    helpers.pause()
    while len(view) != count:
        STATE.get("a")
    return count
