"""A section reads its own write back through a ``MappingProxyType``.

Serial invariant: after ``ACC["a"] = i`` the same call sees ``VIEW["a"] == i``
in ``dict(VIEW)``; every call records a match.

Attacks: ``dict(VIEW)`` of a proxy made at import copies the live dict in
C, not the section's buffered write.
"""

import types

import transaction

ACC = {"a": -1}
VIEW = types.MappingProxyType(ACC)
bad = []


def set_and_read(i):
    ACC["a"] = i
    got = dict(VIEW)["a"]
    if got != i:
        bad.append(("own write missed", i, got))


def main():
    for i in range(50):
        transaction.add(set_and_read, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
