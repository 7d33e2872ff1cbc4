"""What the analysers add up: per-thread totals, conflicts, and the whole run's tally.

The C8 passes (numpy in :mod:`stmlog_tools.c8numpy`, C in
``stmlog_tools._fastc8``) and the C7 loop (:mod:`stmlog_tools.c7`) all fill
a :class:`Tally`; :mod:`stmlog_tools.analysis` turns it into the report.
No numpy here, so the C path starts fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass
class ThreadTotals:
    """One thread's figures over the whole log (C8 fields; C7 uses total and counts)."""

    committed: float = 0.0
    aborted: float = 0.0
    paused: float = 0.0
    gc_minor: float = 0.0
    gc_major: float = 0.0
    count_committed: int = 0
    count_aborted: int = 0
    events: int = 0
    cpu_total: float = 0.0    # C7: stop - start - paused, summed
    first_event: int = 0      # index of the thread's first event: PyPy summed in that order


@dataclass
class Conflict:
    """Time lost to one (event, markers) pair, and when it happened."""

    event: str
    markers: tuple[bytes, ...]
    count: int = 0
    aborted_time: float = 0.0
    paused_time: float = 0.0
    first_seen: int = 0      # index of the first event that charged it (for ranking ties)
    times: list[Sequence[float]] = field(default_factory=list)
    buckets: list[int] | None = None   # the time line, when the pass computed it


@dataclass
class Tally:
    """A pass over a log: its time span, event count, threads and conflicts."""

    first_time: float | None = None
    last_time: float = 0.0
    seen: int = 0
    threads: dict[int, ThreadTotals] = field(default_factory=dict)

    def threads_by_appearance(self) -> list[ThreadTotals]:
        """The threads in the order they first logged: the order PyPy added them up in."""
        return sorted(self.threads.values(), key=lambda t: t.first_event)
    conflicts: dict[object, Conflict] = field(default_factory=dict)


def timeline(times: Iterable[float], start: float, total: float, buckets: int) -> list[int]:
    """How many of ``times`` fall in each of ``buckets`` equal slices of the run.

    PyPy's formula, ``int((t - start) / total * buckets)``, with the last
    timestamp kept in the last bucket (PyPy ran off the end) and a run of
    zero length put in the first.
    """
    counts = [0] * buckets
    for t in times:
        index = int((t - start) / total * buckets) if total > 0 else 0
        counts[min(max(index, 0), buckets - 1)] += 1
    return counts
