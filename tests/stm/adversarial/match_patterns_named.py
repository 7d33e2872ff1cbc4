"""``match`` statements whose patterns CPython evaluates past the barriers:
dotted value patterns (``case CFG.mode:``, ``case Modes.current:``) after the
call's own write and against concurrent switches; a class pattern of a
runtime_checkable Protocol after the call gave the object the protocol's
method (or took it away); a class pattern of an ABC whose application
``__subclasshook__`` reads a flag other calls flip.

Serial invariant: ``CFG.mode = x; match x: case CFG.mode:`` matches; a reader's
match agrees with the CFG.mode it reads next; the Protocol pattern agrees with
what the call just did; the ABC pattern (each class checked once) answers
``not STRICT["on"]`` as the call itself then reads it.
Attacks: value patterns read attributes with a plain LOAD_ATTR, class
patterns run the metaclass's __instancecheck__ from C (MATCH_CLASS), not the
isinstance special (barriers.match_patterns now makes such a section
inevitable unless every class answers by type and every dotted value belongs
to an Enum). Red-team round 19 (match_value_attr, match_protocol_own,
abc_hook_cache FORM=match).
"""
import abc
import enum
import sys
import typing
import transaction


class Cfg:
    pass


CFG = Cfg()
CFG.mode = 0


class Modes:
    current = 0


class Color(enum.Enum):
    RED = 1
    BLUE = 2


@typing.runtime_checkable
class Runnable(typing.Protocol):
    def run(self): ...


class Job:
    pass


STRICT = {"on": False}


class Pluggable(abc.ABC):
    @classmethod
    def __subclasshook__(cls, C):
        return NotImplemented if STRICT["on"] else True


K = 300
JOBS = [Job() for _ in range(K)]
KINDS = [type("Foo%d" % i, (), {}) for i in range(K)]
OBJS = [kind() for kind in KINDS]
BAD = []


def switch(i):
    CFG.mode = i
    Modes.current = i
    match i:
        case CFG.mode:
            a = True
        case _:
            a = False
    match i:
        case Modes.current:
            b = True
        case _:
            b = False
    match Color(1 + i % 2):
        case Color.RED:
            c = i % 2 == 0
        case Color.BLUE:
            c = i % 2 == 1
    if not (a and b and c):
        BAD.append(("own", i, a, b, c))


def reader(i):
    v = i - 1
    match v:
        case CFG.mode:
            m = True
        case _:
            m = False
    x = 0
    for j in range(200):
        x += j
    if m != (CFG.mode == v):
        BAD.append(("torn", i, m, CFG.mode, v))


def protocol(i):
    job = JOBS[i]
    job.run = len
    match job:
        case Runnable():
            had = True
        case _:
            had = False
    del job.run
    match job:
        case Runnable():
            still = True
        case _:
            still = False
    if (had, still) != (True, False):
        BAD.append(("protocol", i, had, still))


def plugin(i):
    if i % 7 == 0:
        STRICT["on"] = not STRICT["on"]
        return
    match OBJS[i]:
        case Pluggable():
            r = True
        case _:
            r = False
    x = 0
    for j in range(200):
        x += j
    if r != (not STRICT["on"]):
        BAD.append(("abc", i, r, STRICT["on"]))


def main():
    calls = (switch, reader, protocol, plugin)
    for i in range(K):
        transaction.add(calls[i % len(calls)], i)
    transaction.run()
    if BAD:
        print("BAD", len(BAD), BAD[:4])
        sys.exit(1)
    print("OK", CFG.mode)


main()
