"""Shared state a lazily imported plugin's body writes (``lazy_import_body``)."""

PLUGINS: list = []
COUNTS = {"n": 0}
