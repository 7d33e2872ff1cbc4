"""State kept in an uninstrumented module (docs/semantics.md, limit 1)."""

STATE = {"x": 0}
