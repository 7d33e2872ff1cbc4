"""The builtins that look at their caller's frame (globals, locals, vars, dir,
eval, exec) called through another name: ``builtins.globals()``, an alias
``ev = eval``, ``getattr(builtins, "locals")()``; one call writes a global
through ``builtins.globals()``. Every call also bumps a shared counter.

Serial invariant (plain Python): each sees the calling function's own frame:
GLOBAL_MARK is in its globals, ``ev("x") == 5``, ``d()`` lists x, a name set
through ``builtins.globals()`` is a global of this module.
Attacks: the rewriter makes direct calls of these names frame-aware; a call
through another name went through the call barrier, whose Python frame (the
engine's) was then the caller: the engine module's globals came back, and a
write through them bound a name in tornado_stm.stm.calls
(specials._special_frame_builtin now answers for the application's frame).
Red-team round 20 (globals_alias_min, frame_builtins_alias, locals_routes).
"""
import builtins
import sys
import transaction

GLOBAL_MARK = 42
STATS = {"n": 0}
BAD = []


def step(i):
    STATS["n"] += 1
    x = 5
    ev, d, g, ex = eval, dir, globals, exec
    ns = {}
    ex("y = 10", None, ns)
    got = {
        "builtins.globals": "GLOBAL_MARK" in builtins.globals(),
        "builtins.locals": builtins.locals().get("x") == 5,
        "alias eval": ev("x") == 5,
        "alias eval global": ev("GLOBAL_MARK") == 42,
        "alias dir": "x" in d() and "_stm_tx" not in d(),
        "exec with ns": ns.get("y") == 10,
        "alias globals": g().get("GLOBAL_MARK") == 42,
        "getattr locals": sorted(getattr(builtins, "locals")()) == ["d", "ev", "ex", "g", "i", "ns", "x"],
    }
    if i == 0:
        builtins.globals()["SET_HERE"] = True
    bad = sorted(name for name, ok in got.items() if not ok)
    if bad:
        BAD.append((i, bad))


def main():
    for i in range(40):
        transaction.add(step, i)
    transaction.run()
    if BAD or STATS["n"] != 40 or not globals().get("SET_HERE"):
        print("BAD", BAD[:2], STATS, "SET_HERE" in globals())
        sys.exit(1)
    print("OK", STATS["n"])


main()
