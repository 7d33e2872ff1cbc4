"""Per-thread statistics of atomic sections.

Each thread that runs sections owns one ``ThreadStats`` and is the only
writer of it, so counting needs no lock; ``snapshot()`` sums them all
(reading counters that another thread is updating gives a value that
was true a moment ago, which is what a statistics snapshot promises).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

_registry_lock = threading.Lock()
_registry: list["ThreadStats"] = []
_local = threading.local()


@dataclass
class ThreadStats:
    """What one thread's sections did."""

    thread_num: int
    commits: int = 0
    aborts: Counter = field(default_factory=Counter)
    inevitable: Counter = field(default_factory=Counter)
    wait_w_seconds: float = 0.0
    #: Commits placed in the serial order before a later clock reader's
    #: (txn.place_before_later_readers), instead of aborting.
    placed_earlier: int = 0

    def as_dict(self) -> dict:
        return {
            "thread_num": self.thread_num,
            "commits": self.commits,
            "aborts": sum(self.aborts.values()),
            "aborts_by_cause": dict(self.aborts),
            "inevitable": sum(self.inevitable.values()),
            "inevitable_by_cause": dict(self.inevitable),
            "wait_w_seconds": self.wait_w_seconds,
            "placed_earlier": self.placed_earlier,
        }


def for_current_thread() -> ThreadStats:
    """This thread's statistics, created on first use (numbered 1, 2, 3...)."""
    stats = getattr(_local, "stats", None)
    if stats is None:
        with _registry_lock:
            stats = ThreadStats(thread_num=len(_registry) + 1)
            _registry.append(stats)
        _local.stats = stats
    return stats


def snapshot() -> dict:
    """All threads summed, plus the per-thread figures under ``"threads"``."""
    with _registry_lock:
        threads = list(_registry)
    aborts: Counter = Counter()
    inevitable: Counter = Counter()
    for stats in threads:
        aborts.update(stats.aborts)
        inevitable.update(stats.inevitable)
    return {
        "commits": sum(s.commits for s in threads),
        "aborts": sum(aborts.values()),
        "aborts_by_cause": dict(aborts),
        "inevitable": sum(inevitable.values()),
        "inevitable_by_cause": dict(inevitable),
        "wait_w_seconds": sum(s.wait_w_seconds for s in threads),
        "placed_earlier": sum(s.placed_earlier for s in threads),
        "threads": [s.as_dict() for s in threads],
    }


def reset() -> None:
    """Zero every counter (thread numbers are kept)."""
    with _registry_lock:
        for stats in _registry:
            stats.commits = 0
            stats.aborts.clear()
            stats.inevitable.clear()
            stats.wait_w_seconds = 0.0
            stats.placed_earlier = 0
