"""Attributes a module object gets from its type, read on the script's own
module (or an instrumented package module) in a section: __class__,
__setattr__, __delattr__, __repr__, __dir__, __annotations__, __eq__.

Serial invariant (plain Python): every check is True, none raises.
Attacks: barriers._module_attr reads an instrumented (versioned) module's
attributes from its namespace dict only, so names that come from ModuleType
(slots, descriptors) raise AttributeError.
Red-team round 17: AttributeError on every run. A module's type answers
what its namespace lacks (barriers._module_attr), and its data descriptors
(__class__, __annotations__) first.
"""
import sys
import types
import transaction
from appstate import defaults

ME = sys.modules[__name__]
RESULTS = {}


def check(i):
    checks = {
        "class": lambda: ME.__class__ is types.ModuleType,
        "other_class": lambda: defaults.__class__ is types.ModuleType,
        "setattr": lambda: callable(ME.__setattr__),
        "delattr": lambda: callable(defaults.__delattr__),
        "repr": lambda: ME.__repr__().startswith("<module"),
        "dir": lambda: "RESULTS" in ME.__dir__(),
        "annotations": lambda: isinstance(defaults.__annotations__, dict),
        "eq": lambda: ME.__eq__(ME) is True,
        "getattr_class": lambda: getattr(ME, "__class__") is types.ModuleType,
        "hasattr_dir": lambda: hasattr(defaults, "__dir__"),
    }
    for name, fn in checks.items():
        try:
            RESULTS[name] = fn()
        except Exception as e:
            RESULTS[name] = repr(e)


def main():
    transaction.add(check, 0)
    transaction.run()
    bad = {k: v for k, v in RESULTS.items() if v is not True}
    if bad:
        print("BAD", bad); sys.exit(1)
    print("OK", RESULTS)


main()
