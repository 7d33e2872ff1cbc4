"""A class whose module the unpickler imports on first use (``lazy_import_by_call``):
its body counts into another module's shared state."""

from appstate import registry

for _ in range(5000):
    registry.COUNTS["n"] += 1


class Thing:
    pass
