"""Library factories that name their caller's module (from its frame:
``sys._getframemodulename``, ``sys._getframe(1).f_globals["__name__"]``):
collections.namedtuple, typing.NamedTuple and the Enum functional API,
typing.NewType, dataclasses.make_dataclass, typing.TypeVar, called from an
application function (in a call, and from top-level code through the same
function); then a pickle round trip of a namedtuple instance.

Serial invariant (plain Python): each ``__module__`` is this module's name,
and the pickle round trip works.
Attacks: the call barrier's own Python frames stood between the application
and the library, which took the engine's module (tornado_stm.stm.calls,
.reach) for the caller: pickling failed. Such calls are now made from a frame
with the application's globals (calls._from_the_application). Red-team
round 20 (caller_module_names).
"""
import collections
import dataclasses
import enum
import pickle
import sys
import typing
import transaction

OUT = {}


def make(tag):
    global PT
    PT = collections.namedtuple("PT", "x y")
    made = (("namedtuple", PT), ("NamedTuple", typing.NamedTuple("NT", [("a", int)])),
            ("Enum", enum.Enum("Color", "RED GREEN")), ("NewType", typing.NewType("UserId", int)),
            ("TypeVar", typing.TypeVar("TV")))
    if sys.version_info >= (3, 12):             # (3.11's names no caller's module)
        made += (("make_dataclass", dataclasses.make_dataclass("DC", ["z"])),)
    OUT[tag] = {name: getattr(made_one, "__module__", None) for name, made_one in made}
    try:
        OUT[tag]["pickle"] = __name__ if pickle.loads(pickle.dumps(PT(1, 2))) == (1, 2) else "?"
    except Exception as error:
        OUT[tag]["pickle"] = repr(error)[:80]


def step(i):
    make("call%d" % i)


def main():
    make("top-level")
    for i in range(3):
        transaction.add(step, i)
    transaction.run()
    bad = {tag: d for tag, d in OUT.items() if set(d.values()) != {__name__}}
    if bad or len(OUT) != 4:
        print("BAD", bad)
        sys.exit(1)
    print("OK", sorted(OUT))


main()
