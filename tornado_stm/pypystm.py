"""PyPy-STM's ``pypystm`` built-in module, for scripts run by ``tornado-stm exec``.

``atomic``, ``exclusive_atomic``, ``single_transaction``, ``is_atomic``,
``getsegmentlimit``, ``hint_commit_soon``, ``count``, ``time`` and
``clock`` are those of :mod:`tornado_stm.transaction`; ``stmdict`` and
``stmset`` too. ``hashtable`` is a dict keyed by integers, ``queue`` a
thread-safe FIFO with ``Empty``, ``local`` a ``threading.local``.
"""

from __future__ import annotations

import queue as _queue
import threading

from tornado_stm.transaction import (atomic, clock, count, exclusive_atomic,  # noqa: F401
                                     getsegmentlimit, hint_commit_soon, is_atomic,
                                     single_transaction, stmdict, stmset, time)

local = threading.local
Empty = _queue.Empty


class hashtable(dict):
    """PyPy-STM's integer-keyed hash table: here a dict (tracked per key)."""


#: A FIFO shared between transactions (its operations make a section inevitable).
queue = _queue.Queue
