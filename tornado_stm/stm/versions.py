"""Versioned locks: the global version clock and the striped version table.

This is the TL2 part of the engine. Every shared location an atomic
section can read maps to one *stripe*, a slot of ``VERSIONS``:

* a whole object (a list, a set, "the set of keys" of a dict) maps to
  ``stripe_of_object(id(obj))``;
* one key of a dict (module globals are a dict too) or one attribute of
  an object maps to ``stripe_of_key(id(obj), key)``.

A slot holds the value of ``CLOCK[0]`` at the last commit that wrote
something mapped to it, or ``LOCKED`` while a commit is publishing. Two
locations may share a stripe (and ``id()`` values are reused after
garbage collection): that can only cause a spurious conflict, never hide
a real one.

All commits run under the world lock W, one at a time, so the clock and
the slots need no atomic instructions. The order of a commit (lock the
slots, publish, then bump the clock and store it in the slots) and the
reader's check are stated once, in the docstring of
:mod:`tornado_stm.stm.txn`.
"""

from __future__ import annotations

#: Number of stripes; a power of two. 2**18 slots cost 2 MiB of pointers.
STRIPE_COUNT = 1 << 18
STRIPE_MASK = STRIPE_COUNT - 1

#: Stored in a slot while a commit publishes the locations it covers.
#: It is larger than any clock value, so "newer than my snapshot" and
#: "being written" are caught by one comparison.
LOCKED = 1 << 62

#: The version of every stripe, and last RESHAPE_STRIPE's.
VERSIONS: list[int] = [0] * (STRIPE_COUNT + 1)

#: The global version clock, in a one-element list so that modules that
#: imported it see the updates. Only changed under W.
CLOCK: list[int] = [0]

# Spreads hashes of keys over the table; any odd constant would do.
KEY_SALT = 0x5BD1E995


def stripe_of_object(obj_id: int) -> int:
    """The stripe of a whole object (its length, its keys, its items)."""
    return (obj_id >> 4) & STRIPE_MASK


def stripe_of_key(obj_id: int, key: object) -> int:
    """The stripe of one key of a dict, or one attribute of an object."""
    return ((obj_id >> 4) ^ (hash(key) + KEY_SALT)) & STRIPE_MASK


#: The stripe of changes that reads without a version would see: an
#: object's ``__class__`` or ``__dict__`` replaced in place (``type(obj)``,
#: ``isinstance`` and every method lookup read the class unversioned). Every
#: section reads it at its start; an inevitable section that makes such a
#: change holds it until its end, so every section that overlaps it aborts.
#: A rare write, paid for by everyone's retry, never by a torn read. It is
#: past the hashed stripes, so that no ordinary location shares it.
RESHAPE_STRIPE = STRIPE_COUNT


def lock_stripes(stripes: set[int]) -> None:
    """Mark stripes as being written (caller holds W)."""
    for stripe in stripes:
        VERSIONS[stripe] = LOCKED


def release_stripes(stripes: set[int]) -> int:
    """Advance the clock and give the stripes its new value (caller holds W).

    Returns the new version. Callers lock the stripes *before* calling
    this and publish in between, so a reader that sees the new clock
    value never sees an old value with a version below it.
    """
    version = CLOCK[0] + 1
    CLOCK[0] = version
    for stripe in stripes:
        VERSIONS[stripe] = version
    return version
