"""Python features whose behaviour must not change under instrumentation.

Each ``case_*`` function returns a value built from what it observed;
the test runs it plain and instrumented and compares.
"""

import collections

registry = {"calls": 0}
flag = False


class Base:
    def __init__(self, x):
        self.x = x

    def describe(self):
        return f"Base({self.x})"


class Child(Base):
    kind = "child"

    def __init__(self, x, y):
        super().__init__(x)
        self.y = y

    def describe(self):
        return "Child:" + super().describe()

    @property
    def total(self):
        return self.x + self.y

    @total.setter
    def total(self, value):
        self.y = value - self.x


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self):
        self.a = 1


class Guarded:
    def __init__(self):
        object.__setattr__(self, "log", [])

    def __setattr__(self, name, value):
        self.log.append(name)
        object.__setattr__(self, name, value)


class Seq:
    def __init__(self, items):
        self.items = list(items)

    def __getitem__(self, index):
        return self.items[index]

    def __len__(self):
        return len(self.items)

    def __contains__(self, item):
        return item in self.items


SHARED_CHILD = Child(1, 2)
SHARED_LIST = [3, 1, 2]
SHARED_DICT = {"a": 1, "b": 2}
SHARED_SET = {1, 2}


def case_attributes():
    c = SHARED_CHILD
    out = [c.describe(), c.total, c.kind, getattr(c, "missing", "dflt"), hasattr(c, "y")]
    c.total = 10
    out.append((c.x, c.y, c.total))
    setattr(c, "z", 5)
    out.append(c.z)
    delattr(c, "z")
    out.append(hasattr(c, "z"))
    try:
        c.nope
    except AttributeError as exc:
        out.append(str(exc))
    s = Slotted()
    out.append(hasattr(s, "b"))
    s.b = 2
    out.append((s.a, s.b))
    g = Guarded()
    g.color = "red"
    out.append((g.color, g.log))
    c.y = 2
    c.x = 1
    return out


def case_containers():
    out = []
    lst = SHARED_LIST
    lst.append(4)
    out.append((len(lst), lst[-1], lst[1:3], sorted(lst), 4 in lst, 9 not in lst))
    lst[0] += 10
    out.append(list(lst))
    del lst[0]
    lst.insert(0, 3)
    lst.pop()
    d = SHARED_DICT
    d["c"] = 3
    d["a"] += 5
    out.append((d.get("c"), d.get("zz", 0), "c" in d, len(d), sorted(d.items())))
    del d["c"]
    d["a"] -= 5
    out.append(d.setdefault("q", 7))
    out.append(d.pop("q"))
    try:
        d["missing"]
    except KeyError as exc:
        out.append(repr(exc))
    st = SHARED_SET
    st.add(3)
    st |= {4}
    out.append(sorted(st))
    st -= {3, 4}
    counts = collections.defaultdict(int)
    for word in "a b a c a".split():
        counts[word] += 1
    out.append(sorted(counts.items()))
    seq = Seq([5, 6])
    out.append((seq[0], len(seq), 6 in seq, list(seq)))
    return out


def case_comprehensions_and_iteration():
    data = SHARED_DICT
    out = [[k for k in data], {k: v * 2 for k, v in data.items()},
           {v for v in SHARED_LIST if v > 1}, sum(x * x for x in SHARED_LIST)]
    total = 0
    for index, value in enumerate(SHARED_LIST):
        total += index * value
    out.append(total)
    a, (b, *rest) = SHARED_LIST[0], SHARED_LIST
    out.append((a, b, rest))
    return out


def case_globals_and_closures():
    global flag
    flag = not flag
    registry["calls"] += 1
    counter = 0

    def bump(step=1):
        nonlocal counter
        counter += step
        return counter

    bump()
    bump(5)
    values = list(map(lambda v: v + counter, [1, 2]))
    flag = not flag
    return [flag, counter, values, registry["calls"] > 0]


def case_exceptions_and_lines():
    try:
        return SHARED_LIST[100]
    except IndexError as exc:
        return [type(exc).__name__, str(exc), exc.__traceback__.tb_lineno]
