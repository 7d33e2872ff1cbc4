"""Shared counters of every kind, incremented by application functions."""

from tests.stm import helpers

hits = 0


class Counter:
    class_total = 0

    def __init__(self) -> None:
        self.value = 0


COUNTER = Counter()
TABLE = {"hits": 0}
SLOTS = [0, 0]


def bump_attribute() -> None:
    COUNTER.value += 1


def bump_dict_item() -> None:
    TABLE["hits"] += 1


def bump_dict_item_across_a_pause() -> None:
    """Read, let the test commit a conflicting bump, then write: must retry."""
    seen = TABLE["hits"]
    helpers.pause()
    TABLE["hits"] = seen + 1


def bump_list_item() -> None:
    SLOTS[1] = SLOTS[1] + 1


def bump_global() -> None:
    global hits
    hits += 1


def bump_class_attribute() -> None:
    Counter.class_total += 1


def bump_all() -> None:
    bump_attribute()
    bump_dict_item()
    bump_list_item()
    bump_global()
    bump_class_attribute()


def make_cell_counter():
    """A counter in a closure cell; returns (bump, read)."""
    count = 0

    def bump() -> None:
        nonlocal count
        count += 1

    def read() -> int:
        return count

    return bump, read


def totals() -> dict:
    return {"attribute": COUNTER.value, "dict item": TABLE["hits"], "list item": SLOTS[1],
            "global": hits, "class attribute": Counter.class_total}


def reset() -> None:
    global hits
    hits = 0
    COUNTER.value = 0
    TABLE["hits"] = 0
    SLOTS[1] = 0
    Counter.class_total = 0
