"""Library factories that name the module of their caller (sys._getframe / _caller()):
typing.TypedDict functional form, ParamSpec, TypeVarTuple, TypeAliasType, IntEnum/Flag/StrEnum
functional API, namedtuple with defaults, and pickling what they make.
Serial invariant: made inside a section or outside, each has __module__ == '__main__'
(the script's), and instances of the namedtuple / members of the enums pickle round-trip.
Attacks: calls._from_the_application (round 20's H7 fix) covers namedtuple, Enum, TypeVar,
NewType, make_dataclass; other factories reading their caller's frame meet the call
barrier's.
"""
import collections
import enum
import pickle
import sys
import typing
import transaction

R = {}


def forms():
    out = {}
    TD = typing.TypedDict("TD", {"a": int})
    out["TypedDict"] = TD.__module__
    P = typing.ParamSpec("P")
    out["ParamSpec"] = getattr(P, "__module__", None)
    Ts = typing.TypeVarTuple("Ts")
    out["TypeVarTuple"] = getattr(Ts, "__module__", None)
    if hasattr(typing, "TypeAliasType"):            # (Python 3.12 and later)
        TA = typing.TypeAliasType("TA", int)
        out["TypeAliasType"] = getattr(TA, "__module__", None)
    IE = enum.IntEnum("IE", "A B")
    out["IntEnum"] = IE.__module__
    FL = enum.Flag("FL", "R W")
    out["Flag"] = FL.__module__
    SE = enum.StrEnum("SE", "X Y")
    out["StrEnum"] = SE.__module__
    NT = collections.namedtuple("NT", "a b", defaults=[1])
    out["namedtuple_defaults"] = NT.__module__
    TNT = typing.NamedTuple("TNT", [("a", int)])
    out["typing_NamedTuple"] = TNT.__module__
    TV = typing.TypeVar("TV")
    out["TypeVar"] = getattr(TV, "__module__", None)
    NTy = typing.NewType("NTy", int)
    out["NewType"] = getattr(NTy, "__module__", None)
    return out


def section():
    R["sec"] = forms()


def main():
    R["out"] = forms()
    transaction.add(section)
    transaction.run()
    diffs = [(k, R["out"][k], R["sec"].get(k)) for k in R["out"] if R["out"][k] != R["sec"].get(k)]
    print("BAD" if diffs else "OK", diffs)
    return 1 if diffs else 0


sys.exit(main())
