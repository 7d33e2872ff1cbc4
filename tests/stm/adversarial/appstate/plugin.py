"""A plugin a section imports on first use: its body registers itself in,
and counts into, another module's shared state (``lazy_import_body``)."""

from appstate import registry

registry.PLUGINS.append("plugin")
for _ in range(5000):
    registry.COUNTS["n"] += 1
