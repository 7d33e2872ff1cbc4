"""Caches that each thread keeps a copy of: no lock shared between threads on a hot path.

On free-threaded CPython a dict lookup whose key is not a string (a
``(class, name)`` tuple, a function) takes the dict's own lock. A cache
every thread consults at every barrier is then the hottest lock of the
process: under load the threads spin for it (``sched_yield``), and on two
cores that cost a fifth of the A-star game's CPU time (measured with
``perf``). Read-mostly caches whose entries are cheap to find again are
kept per thread instead: each thread fills its own, and the lock it takes
on a lookup is one no other thread ever asks for.
"""

from __future__ import annotations

import threading
from typing import Hashable


class ThreadCopies(threading.local):
    """This thread's dicts, by name, for one generation of what they cache.

    ``of(name, generation)`` returns the thread's dict for ``name``; when
    ``generation`` moved since the thread last asked, every dict of the
    thread starts empty again (the owner bumps its generation when
    cached answers go stale).
    """

    def __init__(self) -> None:
        self.generation = -1
        self.dicts: dict[Hashable, dict] = {}

    def of(self, name: Hashable, generation: int = 0) -> dict:
        if self.generation != generation:
            self.generation = generation
            self.dicts = {}
        found = self.dicts.get(name)
        if found is None:
            found = self.dicts[name] = {}
        return found
