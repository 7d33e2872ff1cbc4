"""Ordinary Python that once escaped the barriers: one function per mechanism of issue 9."""

import collections
import functools
import operator
import weakref
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
    PAIRS[:] = [[50, 50] for _ in range(4)]
    SPOT.x = SPOT.y = 0
    BALANCES.update(a=100, b=100)
    for number, account in enumerate(ACCOUNTS):
        account.balance = 100 + number
    MARK.x = MARK.y = 0
    ROWS[:] = [[1, 2], [3]]
    TALLY.clear()
    TALLY.update(a=1)
    FACTORY.clear()
    FACTORY.default_factory = list
    COUNT["n"] = 0
    TOTAL["v"] = 0
    KEYED.clear()
    KEYED[Key(1)] = 0
    global HITS
    HITS = 0
    HOLDER.value = 0


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
    if i % 2:
        value = max(COUNTS)                  # a read by an uninstrumented builtin
    else:
        for value in COUNTS:                 # a loop (the C barrier once let it through)
            pass
    COUNTS[0] = value + 1
    number = int.from_bytes(bytes(BYTES), "little")
    BYTES[:] = (number + 1).to_bytes(8, "little")


# -- comprehension unpacking and match ---------------------------------------------

PAIRS = [[50, 50] for _ in range(4)]          # every pair sums to 100


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y


SPOT = Point(0, 0)


def first_of_pairs_after_own_write():
    PAIRS[0][0] += 1
    firsts = [a for a, b in PAIRS]
    PAIRS[0][0] -= 1
    return firsts[0]


def match_a_mapping_after_own_write():
    PAIR["a"] += 1
    match PAIR:
        case {"a": a}:
            seen = a
    PAIR["a"] -= 1
    return seen


def match_a_class_after_own_write():
    SPOT.x += 1
    match SPOT:
        case Point(x=x, y=0):
            seen = x
        case _:
            seen = None
    SPOT.x -= 1
    return seen


# -- dict views made outside any section ---------------------------------------------

BALANCES = {"a": 100, "b": 100}
BALANCE_VALUES = BALANCES.values()            # made once, at import


def totals_through_an_old_view_after_own_deposit():
    BALANCES["a"] += 5
    total = sum(BALANCE_VALUES)
    looped = 0
    for value in BALANCE_VALUES:
        looped += value
    BALANCES["a"] -= 5
    return total, looped


def move_between_balances(i):
    BALANCES["a"] -= 7
    busy = 0
    for n in range(200):
        busy += n
    BALANCES["b"] += 7


def total_through_the_old_view():
    return sum(BALANCE_VALUES)


# -- instances read by uninstrumented code -------------------------------------------

import copy as _copy  # noqa: E402
import dataclasses as _dataclasses  # noqa: E402
import operator as _operator  # noqa: E402


class Account:
    def __init__(self, balance):
        self.balance = balance


@_dataclasses.dataclass
class Mark:
    x: int
    y: int


ACCOUNTS = [Account(100 + n) for n in range(4)]
MARK = Mark(0, 0)
BY_BALANCE = _operator.attrgetter("balance")


def copy_after_own_deposit():
    account = ACCOUNTS[0]
    account.balance += 1000
    copied = _copy.copy(account).balance
    account.balance -= 1000
    return copied


def richest_after_own_deposit():
    account = ACCOUNTS[1]
    account.balance += 1000
    richest = max(ACCOUNTS, key=BY_BALANCE)
    account.balance -= 1000
    return ACCOUNTS.index(richest)


def dataclass_reads_after_own_write():
    MARK.x += 1
    seen = (MARK == Mark(1, 0), repr(MARK), f"{MARK}")
    MARK.x -= 1
    return seen


# -- values nested in the arguments of uninstrumented readers ------------------------

import collections as _collections  # noqa: E402

ROWS = [[1, 2], [3]]
TALLY = _collections.Counter(a=1)
FACTORY = _collections.defaultdict(list)


def nested_reads_after_own_append():
    ROWS[0].append(9)
    seen = (sum([ROWS[0]], []), list(map(len, ROWS)), sum(map(sum, ROWS)), str([ROWS[0]]),
            "{0[0][2]}".format(ROWS), " ".join(map(str, ROWS)), list(ROWS) == [[1, 2, 9], [3]],
            [1, 2, 9] in [ROWS[0], ROWS[1]], any(row == [3] for row in ROWS))
    ROWS[0].pop()
    return seen


def format_an_attribute_after_own_write():
    account = ACCOUNTS[2]
    account.balance += 1000
    text = "{0.balance}".format(account)
    account.balance -= 1000
    return text


def counter_and_defaultdict_after_own_writes():
    TALLY["a"] += 1
    del TALLY["missing"]                    # Counter ignores a missing key
    del TALLY["a"]
    after_delete = TALLY["a"]               # a missing key of a Counter is 0
    FACTORY.default_factory = int
    FACTORY["k"] += 1
    return after_delete, dict(FACTORY)


# -- a class statement in a section ----------------------------------------------------

COUNT = {"n": 0}


def class_statement_after_own_write():
    COUNT["n"] = 1
    step = 10

    def advance():
        nonlocal step
        step += 1

    class Snapshot:                 # its body and methods run in this section
        n = COUNT["n"]

        def total(self):
            return self.n + step
    advance()
    COUNT["n"] = 0
    return Snapshot.n, Snapshot().total()


# -- keys whose own __eq__ runs when the dict is written -----------------------------

TOTAL = {"v": 0}


class Key:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        for _ in range(1100):                   # enough reads to reach a re-validation
            self.n
        return self.n == other.n                # AttributeError against an int

    def __hash__(self):
        return hash(self.n)


KEYED = {Key(1): 0}


def count_then_store(i):
    TOTAL["v"] += 1
    try:
        KEYED[1] = i                         # compares with Key(1): raises
    except AttributeError:
        pass
    KEYED[Key(2 + i % 3)] = i                # an equal key exists after the first


# -- names bound by walrus and with-as targets (fourth round) ---------------------

HITS = 0


class Holder:
    pass


HOLDER = Holder()
HOLDER.value = 0


class Entering:
    """A context manager whose __enter__ returns the holder's value plus one."""

    def __enter__(self):
        return HOLDER.value + 1

    def __exit__(self, *exc):
        return False


def bind_shared_names_across_a_conflict():
    """A global by walrus, an attribute by with-as, a nonlocal by walrus; then a retry."""
    global HITS
    seen = GATE["v"]
    if (HITS := HITS + 1) < 0:
        raise AssertionError("unreachable")
    with Entering() as HOLDER.value:
        pass
    steps = 0

    def step():
        nonlocal steps
        return (steps := steps + 1)

    step()
    step()
    helpers.pause()
    GATE["v"] = seen + steps


HANDLER = None


def bind_by_statements(i):
    """A global bound by def, a nonlocal bound by def and by import."""
    global HANDLER
    seen = GATE["v"]

    def HANDLER():
        return i

    callback = shown = None

    def install():
        nonlocal callback, shown
        from json import dumps as shown

        def callback():
            return "called"

    install()
    return seen, callback(), shown([i])


# -- attributes that fall back, escape or reshape (fourth round) ------------------

class Settings:
    color = "red"                         # the class default


class Cart:
    def __init__(self):
        self.items = [1, 2, 3]

    @functools.cached_property
    def total(self):
        return sum(self.items)


SETTINGS = Settings()
CART = Cart()


class Plain:
    pass


class Flagged:
    pass


SHAPED = Plain()
FLAGGED = [0]


def reset_attributes():
    SETTINGS.color = "blue"               # an instance value over the class default
    CART.items = [1, 2, 3]
    CART.__dict__.pop("total", None)
    CART.total                            # cached: 6
    SHAPED.__class__ = Plain
    SHAPED.a = SHAPED.b = 0
    FLAGGED[0] = 0


def deleted_attributes_fall_back():
    """``del`` an instance value: the class default shows again, a cached_property recomputes."""
    del SETTINGS.color
    CART.items.append(4)
    del CART.total
    return SETTINGS.color, CART.total


def count_through_vars():
    vars(SHAPED)["a"] = vars(SHAPED)["a"] + 1
    return SHAPED.a, vars(SHAPED)["a"]


def flip_class(i):
    if type(SHAPED) is Plain:
        SHAPED.__class__ = Flagged
        FLAGGED[0] += 1
    else:
        SHAPED.__class__ = Plain
        FLAGGED[0] -= 1


def class_agrees_with_flag(i):
    return (type(SHAPED) is Flagged) == (FLAGGED[0] == 1)


# -- containers the section wrote, kept or returned by a call (fourth round) --------

BATCH = []
QUEUE_A = [0, 0]
QUEUE_B = [0]
INDEX = []
DICTS = {}


class Owner:
    def __init__(self, items):
        self.items = items


class Carried(Exception):
    def __init__(self, where):
        super().__init__(where)
        self.where = where


def reset_aliases():
    BATCH[:] = []
    QUEUE_A[:] = [0, 0]
    QUEUE_B[:] = [0]
    INDEX[:] = []
    DICTS.clear()


def keep_written_containers():
    """Write BATCH and the queues, then hand them to calls that keep or return them."""
    BATCH.append(1)
    INDEX.append(BATCH)                       # a container method keeps it
    INDEX.insert(0, BATCH)
    owner = Owner(BATCH)                      # an application class keeps it
    owner.items.append(2)
    DICTS["wrapped"] = dict(batch=BATCH)      # a builtin keeps a keyword value
    QUEUE_A.append(1)
    QUEUE_B.append(1)
    shortest = min(QUEUE_A, QUEUE_B, key=len)  # a builtin returns one
    shortest.append("job")
    raise Carried(BATCH)


def identities_after_keep():
    return (INDEX[0] is BATCH and INDEX[1] is BATCH, DICTS["wrapped"]["batch"] is BATCH,
            list(BATCH), list(QUEUE_B))


# -- shared containers changed by plain code a section hands them to (fourth round) --

EVENTS = []
EVENT_KEYS = {}


def reset_events():
    EVENTS[:] = []
    EVENT_KEYS.clear()


def record_event(i):
    """Four ways to append: a plain call, and plain code given the container or its method."""
    way = i % 4
    if way == 0:
        EVENTS.append(i)
    elif way == 1:
        list(map(EVENTS.append, [i]))
        collections.deque(map(EVENT_KEYS.__setitem__, [i], [i]), maxlen=0)
    elif way == 2:
        functools.partial(EVENTS.append)(i)
    else:
        operator.methodcaller("append", i)(EVENTS)


# -- except ... as a global or a nonlocal (fifth round) ---------------------------

LAST_ERROR = "none"


def catch_into_a_global():
    """Binds the global by ``except ... as``, pauses inside the block, then Python unbinds it."""
    global LAST_ERROR
    try:
        raise ValueError("boom")
    except ValueError as LAST_ERROR:
        helpers.pause()
        return repr(LAST_ERROR)


def read_last_error():
    try:
        return LAST_ERROR
    except NameError:
        return "unbound"


def catch_into_a_nonlocal():
    caught = "before"

    def grab():
        nonlocal caught
        try:
            raise KeyError("k")
        except KeyError as caught:
            return repr(caught)

    seen = grab()
    try:
        return seen, caught
    except NameError:
        return seen, "unbound"


# -- a partial kept after the section wrote its argument (fifth round) -------------

BATCH: list = []
KEPT: list = []


def _add_to(items, item):
    items.append(item)


def keep_a_partial_of_a_written_list():
    BATCH.append(1)
    KEPT[:] = [functools.partial(_add_to, BATCH), functools.partial(_add_to, items=BATCH)]


def add_through_the_kept_partials():
    KEPT[0](item=2)
    KEPT[1](item=3)


INSTANCE_DICT_ROUTES = {
    "getattr": lambda obj: getattr(obj, "__dict__"),
    "attrgetter": operator.attrgetter("__dict__"),
    "object.__getattribute__": lambda obj: object.__getattribute__(obj, "__dict__"),
    "__getstate__": lambda obj: obj.__getstate__(),
    "__reduce_ex__": lambda obj: obj.__reduce_ex__(2)[2],
    "the __dict__ descriptor": lambda obj: type(obj).__dict__["__dict__"].__get__(obj),
}


def count_through_getattr_dict_inevitably(route="getattr"):
    """An inevitable section changes SHAPED's attributes through its live __dict__."""
    stm.become_inevitable("test")
    values = INSTANCE_DICT_ROUTES[route](SHAPED)
    values["a"] += 1
    helpers.pause()
    values["b"] += 1


def read_shaped_pair():
    return SHAPED.a, SHAPED.b


# -- application decorators written with functools.wraps (fifth round) -------------

AUDIT: list = []


def audited(f):
    @functools.wraps(f)
    def wrapper(*args):
        AUDIT.append(f.__name__)
        return 2 * f(*args)
    return wrapper


@audited
def three():
    return 3


def call_a_decorated_function():
    return three()


# -- a list made in the section, published, filled after it turns inevitable -------

CURRENT = {"pair": [1, 1]}


def publish_then_fill_inevitably(value):
    pair = [0, 0]                 # a display: the rewriter fills it without barriers
    CURRENT["pair"] = pair
    stm.become_inevitable("test")
    pair[0] = value
    helpers.pause()
    pair[1] = value


def read_current_pair():
    pair = CURRENT["pair"]
    return pair[0], pair[1]


# -- += on a shared bytearray (fifth round) -------------------------------------

LOG = {"bytes": bytearray()}


def add_a_byte_across_a_conflict():
    seen = GATE["v"]
    helpers.pause()
    LOG["bytes"] += b"y"
    GATE["v"] = seen + 1


# -- iterators and views kept for a later section (fifth round) --------------------

SETTINGS_MAP = {"a": 0}
FEED = ["a"]
KEPT_READERS: dict = {}


def keep_readers():
    KEPT_READERS["values"] = SETTINGS_MAP.values()
    KEPT_READERS["cursor"] = iter(FEED)
    next(KEPT_READERS["cursor"])


def change_what_they_read():
    SETTINGS_MAP["a"] = 5
    FEED.append("b")


def use_kept_readers():
    return sum(KEPT_READERS["values"]), list(KEPT_READERS["cursor"])


# -- a library module's attributes: read plainly until a section writes one ------

from tests.stm import libstate  # noqa: E402  (not instrumented)


def read_library_value_twice():
    first = libstate.VALUE
    helpers.pause()
    return first, libstate.VALUE


def set_library_value(value):
    libstate.VALUE = value


# -- containers changed by calls the table took for readers (sixth round) ---------

DECK = list(range(10))
REFILLED = {"list": [0], "set": {0}, "dict": {"n": 0}, "deque": collections.deque([0])}


def shuffle_after_a_whole_read(seed):
    sorted(DECK)                          # a whole read: the section has a copy of DECK
    _random.Random(seed).shuffle(DECK)
    return list(DECK)


def init_again_after_whole_reads():
    sizes = [len(box) for box in REFILLED.values()]
    list.__init__(REFILLED["list"], [1, 2])
    REFILLED["set"].__init__({3})
    REFILLED["dict"].__init__(n=4)
    collections.deque.__init__(REFILLED["deque"], [5])
    return sizes


# -- finalizers around aborts (sixth round) ---------------------------------------

ALIVE = {"n": 0}
HELD: dict = {}


class Resource:
    def __init__(self):
        ALIVE["n"] += 1

    def __del__(self):
        ALIVE["n"] -= 1


def replace_a_resource_across_a_conflict(key):
    seen = GATE["v"]
    HELD[key] = Resource()           # the old one dies when this commits
    helpers.pause()
    GATE["v"] = seen + 1


class SlowResource:
    """A resource whose __init__ counts it, then reads GATE after a pause: a
    conflict aborts the attempt inside __init__."""

    def __init__(self):
        ALIVE["n"] += 1
        helpers.pause()
        self.gate = GATE["v"]

    def __del__(self):
        ALIVE["n"] -= 1


def make_a_slow_resource(key):
    seen = GATE["v"]
    HELD[key] = SlowResource()
    return seen


def replace_a_resource(key):
    HELD[key] = Resource()           # the old one dies when this commits


def hold_a_resource_across_a_conflict(key):
    """If HELD[key] is replaced meanwhile, this attempt's local is the old
    resource's last reference when the attempt aborts."""
    resource = HELD[key]
    seen = GATE["v"]
    helpers.pause()
    GATE["v"] = seen + 1
    return resource is not None


class Handle:
    """A resource released through ``weakref.finalize`` instead of ``__del__``."""

    def __init__(self):
        ALIVE["n"] += 1
        weakref.finalize(self, release_handle)


def release_handle():
    ALIVE["n"] -= 1


def replace_a_handle(key):
    HELD[key] = Handle()             # the old one dies when this commits


def let_go_of_a_handle_after_a_pause(key):
    """Also a cursor: whatever HELD[key] is."""
    handle = HELD[key]
    seen = ALIVE["n"]
    helpers.pause()
    del handle                       # the last reference, if the handle was replaced meanwhile
    return seen


def cursor():
    """A generator that holds a resource while it is open."""
    ALIVE["n"] += 1
    try:
        while True:
            yield 1
    finally:
        ALIVE["n"] -= 1


def replace_a_cursor(key):
    opened = cursor()
    next(opened)
    HELD[key] = opened               # the old one is closed when it is collected


def close_and_count(key):
    before = ALIVE["n"]
    HELD.pop(key).close()
    return before, ALIVE["n"]


def open_close_and_count():
    opened = cursor()
    next(opened)
    before = ALIVE["n"]
    opened.close()
    return before, ALIVE["n"]


WATCHES = []                         # a weakref dead before its referent calls nothing


class Watched:
    """A resource released through a ``weakref.ref`` callback."""

    def __init__(self):
        ALIVE["n"] += 1
        WATCHES.append(weakref.ref(self, release_watched))


def release_watched(dead_ref):
    WATCHES.remove(dead_ref)
    ALIVE["n"] -= 1


def replace_a_watched_object(key):
    HELD[key] = Watched()            # the old one dies when this commits


class AliasedResource:
    """A finalizer bound under another name (``__del__ = release``)."""

    def __init__(self):
        ALIVE["n"] += 1

    def release(self):
        ALIVE["n"] -= 1

    __del__ = release


def replace_an_aliased_resource(key):
    HELD[key] = AliasedResource()    # the old one dies when this commits
