"""A module whose class gives it a property (the documented module-__class__ idiom)."""
import sys, types

_hits = 0
_log = []


class _Mod(types.ModuleType):
    @property
    def hits(self):
        return _hits

    @hits.setter
    def hits(self, v):
        global _hits
        _hits = v


sys.modules[__name__].__class__ = _Mod


