"""Introspection an ordinary program does in a queued call: its own frame's
name and globals (sys._getframe(), inspect.currentframe()), a function's
__globals__/__code__/__defaults__, the caller found by inspect.stack().

Serial invariant (plain Python): every check is True.
Attacks: the entry wrapper (section.entry) standing in for application
functions, and the call barrier's frames between the user's frames.
Red-team round 17: 10 of 11 checks wrong on every run; f.__globals__ is now
the function's module's, sys._getframe/inspect.currentframe/inspect.stack/
traceback.extract_stack leave the engine's frames out, and globals() in a
module that names it is called from its own frame, and helper.__code__ read
in application code is the function's (round 18).
"""
import inspect
import sys
import traceback
import transaction

RESULTS = {}
MARK = "module-mark"


def helper(a, b=5):
    return b


def whoami():
    return sys._getframe(1).f_code.co_name


def call(i):
    me = whoami()
    checks = {
        "getframe_name": lambda: sys._getframe(1).f_code.co_name == "call",
        "getframe_globals": lambda: sys._getframe(1).f_globals.get("MARK") == "module-mark",
        "currentframe_name": lambda: inspect.currentframe().f_back.f_code.co_name == "call",
        "whoami": lambda: me == "call",
        "code_name": lambda: helper.__code__.co_name == "helper",
        "defaults": lambda: helper.__defaults__ == (5,),
        "globals": lambda: helper.__globals__.get("MARK") == "module-mark",
        "globals_is": lambda: helper.__globals__ is globals(),
        "stack_caller": lambda: inspect.stack()[1].function == "call",
        "extract_stack": lambda: traceback.extract_stack()[-2].name == "call",
        "locals": lambda: sys._getframe(1).f_locals.get("i") == i,
    }
    for name, fn in checks.items():
        try:
            RESULTS[name] = fn()
        except Exception as e:
            RESULTS[name] = repr(e)


def main():
    transaction.add(call, 0)
    transaction.run()
    bad = {k: v for k, v in RESULTS.items() if v is not True}
    if bad:
        print("BAD", bad); sys.exit(1)
    print("OK", RESULTS)


main()
