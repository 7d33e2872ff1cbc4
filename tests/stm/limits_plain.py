"""State kept in an uninstrumented module (docs/semantics.md, limit 1)."""

STATE = {"x": 0}


def plain_lookup(table, key):
    """A dict lookup by uninstrumented code: Python hashes the key once."""
    return table.get(key)
