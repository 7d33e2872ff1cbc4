"""Ordinary Python that once escaped the barriers: one function per mechanism of issue 9."""

from collections import OrderedDict

from tests.stm import helpers
from tornado_stm import stm

PAIR = {"a": 0, "b": 0}
ITEMS = [1, 2, 3]
SRC = [1]
DST = []
ORDER = OrderedDict((k, k) for k in "abcd")
GATE = {"v": 0}


class Base:
    x = 0


class Sub(Base):
    pass


def write_pair_inevitably_across_a_pause(value):
    stm.become_inevitable("test")
    PAIR["a"] = value
    helpers.pause()
    PAIR["b"] = value


def read_pair():
    return (PAIR["a"], PAIR["b"])


def lazy_sum_after_own_append():
    numbers = (x for x in ITEMS)
    ITEMS.append(100)
    return sum(numbers)


def truth_after_own_clear():
    ITEMS.clear()
    if ITEMS:
        return "non-empty"
    return "empty"


def operator_after_own_append():
    ITEMS.append(4)
    return ITEMS + [5]


def extend_from_a_list_written_here():
    SRC.append(2)
    DST.extend(SRC)
    return list(DST)


def popitem_across_a_conflict():
    seen = GATE["v"]
    ORDER.popitem(last=False)
    helpers.pause()
    GATE["v"] = seen + 1


def bump_gate():
    GATE["v"] += 1


def copy_sub_x_across_a_pause():
    seen = Sub.x
    helpers.pause()
    GATE["v"] = seen


def set_base_x(value):
    Base.x = value


def fail_after_writing(value):
    PAIR["a"] = value
    raise KeyError("after the write")


def reset():
    PAIR.update(a=0, b=0)
    ITEMS[:] = [1, 2, 3]
    SRC[:] = [1]
    DST[:] = []
    ORDER.clear()
    ORDER.update((k, k) for k in "abcd")
    GATE["v"] = 0
    Base.x = 0


def note_whether_k_is_there_across_a_pause():
    seen = "k" in PAIR
    helpers.pause()
    GATE["v"] = seen


def add_k_inevitably():
    stm.become_inevitable("test")
    PAIR.update({"k": 1})


def drop_k():
    PAIR.pop("k", None)


def scan_or_reorder(i):
    if i % 2:
        ORDER.move_to_end(list(ORDER)[0])
    else:
        keys = [*ORDER]
        assert sorted(keys) == ["a", "b", "c", "d"], keys


# -- container subclasses that override their methods (a copy cannot stand in) --

class Slots(list):
    """Textbook subclassing: an override that delegates to ``super()``."""

    def __setitem__(self, index, value):
        super().__setitem__(index, value)


class Registry(dict):
    """An auto-vivifying dict: a missing key is stored into ``self``."""

    def __missing__(self, key):
        self[key] = value = []
        return value


class Tagged(list):
    """Adds a method of its own only: copies still stand in for it."""

    def total(self):
        return sum(self)


SLOTS = Slots([0] * 4)
REGISTRY = Registry()
TAGGED = Tagged([0])


def reset_subclasses():
    SLOTS[:] = [0] * 4
    REGISTRY.clear()
    TAGGED[:] = [0]


def bump_slot(i):
    SLOTS[i % 4] = SLOTS[i % 4] + 1


def register(i):
    REGISTRY[i % 5].append(i)


def bump_tagged(i):
    TAGGED[0] = TAGGED[0] + 1


# -- a shared seeded generator: aborted attempts must not consume draws --------

import random as _random  # noqa: E402

RNG = _random.Random(2014)
DRAWS: list = []


def reset_draws():
    RNG.seed(2014)
    DRAWS.clear()


def draw(i):
    DRAWS.append(RNG.randint(0, 10**9))
    own = _random.Random(i)          # made by this section: stays optimistic
    own.random()


# -- a shared iterator: aborted attempts must not consume its items --------------

import itertools as _itertools  # noqa: E402

IDS = _itertools.count()
TAKEN: list = []


def reset_ids():
    global IDS
    IDS = _itertools.count()
    TAKEN.clear()


def take_id(i):
    TAKEN.append(next(IDS))
    mine = list(enumerate(zip(PAIR, ITEMS)))    # made by this section: stays optimistic
    for _ in iter(mine):
        pass


# -- mutable buffers read by pure builtins -----------------------------------------

import array as _array  # noqa: E402

COUNTS = _array.array("q", [0])
BYTES = bytearray(8)


def reset_buffers():
    COUNTS[0] = 0
    BYTES[:] = bytes(8)


def bump_buffers(i):
    value = max(COUNTS)                      # a read by an uninstrumented builtin
    COUNTS[0] = value + 1
    number = int.from_bytes(bytes(BYTES), "little")
    BYTES[:] = (number + 1).to_bytes(8, "little")
