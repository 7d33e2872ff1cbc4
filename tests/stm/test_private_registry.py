"""The registry of what a section made: its temporaries leave it, what lives stays.

Every display, comprehension and instance a section makes is registered as
private (its writes go in place, unlogged). A long section making
temporaries in a loop would keep them all alive to its end (red-team round
21: two million loop steps, 1.1 GB); the registry drops, as it grows, the
objects only it keeps alive (``Transaction.prune_private``). Both barriers
that register (the pure-Python ``new`` and the C fast path's) are checked.
"""

from __future__ import annotations

import pytest

from tornado_stm import stm
from tornado_stm.stm import fastpath
from tornado_stm.stm.stats import for_current_thread
from tornado_stm.stm.txn import PRUNE_PRIVATE_EVERY, Transaction

stm.start()

NEW_BARRIERS = [pytest.param(fastpath.PYTHON["new"], id="python")] + (
    [pytest.param(fastpath.C["new"], id="c")] if "new" in fastpath.C else [])


@pytest.mark.parametrize("new", NEW_BARRIERS)
def test_temporaries_leave_the_registry_and_live_objects_stay(new) -> None:
    tx = Transaction(for_current_thread(), False, None)
    kept = [new(tx, {"i": i}) for i in range(100)]
    for i in range(3 * PRUNE_PRIVATE_EVERY):
        new(tx, [i])                       # dropped at once, as in plain Python
    assert len(tx.private) < PRUNE_PRIVATE_EVERY + len(kept)
    assert all(tx.private.get(id(obj)) is obj for obj in kept)


def test_pruning_keeps_what_something_else_holds() -> None:
    tx = Transaction(for_current_thread(), False, None)
    alive = [1]
    tx.private[id(alive)] = alive
    tx.private[id([2])] = [2]              # held by the registry alone
    tx.prune_private()
    assert list(tx.private.values()) == [alive]
