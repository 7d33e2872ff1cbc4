"""A module whose class validates and audits its attribute writes."""
import sys, types

LIMIT = 1000
WRITES = []


class _Guarded(types.ModuleType):
    def __setattr__(self, name, value):
        if name == "LIMIT" and value < 0:
            raise ValueError("LIMIT must be >= 0")
        WRITES.append(name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Guarded
