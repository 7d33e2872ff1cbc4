"""Callables with effects (print, a shared list's bound append, a partial of
print) given as arguments to pure library calls that do not call them: a
listener registry's index/count/remove, repr/str of the callable, ==, hash,
type, dict.fromkeys and dict(cb=...) keeping them in shared state; and then
calling what was kept.

Serial invariant: plain Python's answers (LISTENERS.index(EV.append) == 1,
repr(print) == "<built-in function print>", type(print) is
BuiltinFunctionType, REG["fromkeys"]["k"] is print...), and the callbacks
kept still work, in a section and out of one.
Attacks: a C function with effects handed to library code was replaced by a
closure calling it through the call barrier, also where the library only
compares, formats or keeps it (calls.CalledThroughTheBarrier now compares,
hashes and formats as the callable, is given back where a call's result
keeps it, copies to itself, and type/id see the callable itself). Red-team
rounds 19 and 20 (wrapped_callables, wrapped_kept, standin_copy_min).
"""
import collections
import copy
import functools
import operator
import sys
import types
import transaction

EV = []
P = functools.partial(print, "x")
LISTENERS = [len, EV.append, print, P]
OUT = []
REG = {}


def probe(i):
    res = {}

    def t(name, fn):
        try:
            res[name] = fn()
        except Exception as e:
            res[name] = "EXC " + type(e).__name__
    t("index_append", lambda: LISTENERS.index(EV.append))
    t("index_print", lambda: LISTENERS.index(print))
    t("index_partial", lambda: LISTENERS.index(P))
    t("count_print", lambda: LISTENERS.count(print))
    t("repr_print", lambda: repr(print))
    t("str_append", lambda: str(EV.append).startswith("<built-in method append of list"))
    t("repr_partial", lambda: repr(P).startswith("functools.partial("))
    t("eq_op", lambda: operator.eq(EV.append, EV.append))
    t("fromkeys", lambda: list(dict.fromkeys([print]))[0] is print)
    t("set_call", lambda: print in set([print]))
    t("type_is", lambda: type(print) is types.BuiltinFunctionType)
    t("id_eq", lambda: id(print) == id(print))
    t("hash_eq", lambda: hash(print) == hash(print))
    t("max_of", lambda: max(print, len, key=id) in (print, len))
    want = {"index_append": 1, "index_print": 2, "index_partial": 3, "count_print": 1,
            "repr_print": "<built-in function print>", "str_append": True, "repr_partial": True,
            "eq_op": True, "fromkeys": True, "set_call": True, "type_is": True, "id_eq": True,
            "hash_eq": True, "max_of": True}
    OUT.append({k: (res[k], want[k]) for k in want if res[k] != want[k]})
    LISTENERS.remove(print)
    LISTENERS.append(print)


def keep(i):
    REG["dict_kw"] = dict(cb=EV.append)
    REG["fromkeys"] = dict.fromkeys(["k"], print)
    REG["deque"] = collections.deque([EV.append])
    REG["max"] = max([print], key=id)
    REG["sorted"] = sorted([EV.append, EV.append], key=id)
    REG["copy"] = copy.copy(print)
    REG["copy_append"] = copy.copy(EV.append)


def main():
    transaction.add(probe, 0)
    transaction.add(keep, 1)
    transaction.run()
    r = REG
    checks = {
        "dict_kw": r["dict_kw"]["cb"] == EV.append,
        "fromkeys": r["fromkeys"]["k"] is print,
        "deque": r["deque"][0] == EV.append,
        "max": r["max"] is print,
        "sorted": r["sorted"][0] == EV.append,
        "copy": r["copy"] is print,
        "copy_append": type(r["copy_append"]) is types.BuiltinMethodType,
    }
    r["dict_kw"]["cb"]("outside")
    transaction.add(lambda: r["dict_kw"]["cb"]("in-section"))
    transaction.run()
    checks["calls_work"] = EV == ["outside", "in-section"]
    bad = sorted(k for k, v in checks.items() if not v)
    if OUT[0] or bad or len(LISTENERS) != 4:
        print("BAD", OUT[0], bad, len(LISTENERS))
        sys.exit(1)
    print("OK", len(LISTENERS))


main()
