"""Analyse a PYPYSTM log with PyPy's arithmetic, and go further; build the report dict.

Interface (stable, others rely on it)::

    from stmlog_tools.analysis import analyse
    report = analyse("run.log", events="final")   # the dict `stmlog report --json` prints
    report = analyse(open_log("-"), events="auto")  # an input opened (header checked) by the caller

The schema is documented in docs/stmlog.md. In short: ``format``,
``events``, ``total_real_time``, ``cpu_time``, ``transactions``,
``threads`` (per-thread figures), ``conflicts`` (all of them, ranked as
PyPy ranked them: by aborted + paused time, largest first), ``locations``
(conflicts grouped by source file and line), ``warnings``.

This module picks the pass and words the result. The passes:

* C8, ``engine="c"``: ``stmlog_tools._fastc8``, one sequential C loop
  (optional, built by setup.py where a compiler is; the default when built);
* C8, ``engine="numpy"``: :mod:`stmlog_tools.c8numpy`, vectorised per chunk;
* C7: :mod:`stmlog_tools.c7`, a plain loop.

All follow the rules in ../shared/docs/pypystm-log-format.md. Nothing here
imports numpy, so the C path starts quickly (``events="auto"`` does: the
guess, :mod:`stmlog_tools.guess`, reads with the numpy reader).
"""

from __future__ import annotations

import linecache
import logging
import re
from collections.abc import Iterable

from stmlog_tools.format import C8_FINAL, C8_MAX_MARKER, table_for
from stmlog_tools.guess import resolve_numbering
from stmlog_tools.logfile import (
    LogError, LogInput, ProgressCallback, decreasing_time_problem, empty_log_error,
    long_marker_problem, open_log, truncated_warning, unknown_event_problem,
)
from stmlog_tools.tallies import Conflict, Tally, ThreadTotals, timeline

try:   # the optional C accelerator of the C8 pass (built by setup.py where it can be)
    from stmlog_tools import _fastc8
except ImportError:
    _fastc8 = None

log = logging.getLogger(__name__)

#: Choices for the C8 pass of :func:`analyse`.
ENGINES = ("auto", "c", "numpy")

MARKER_RE = re.compile(rb'File "(.+)", line (\d+)')

#: Width of PyPy's conflict time lines: 60 buckets for C8, 48 for C7.
C8_TIMELINE_BUCKETS = 60
C7_TIMELINE_BUCKETS = 48


def marker_text(marker: bytes) -> str:
    return marker.decode("utf-8", "backslashreplace")


def marker_location(marker: bytes) -> tuple[str, int] | None:
    """(file, line) named by a marker ``File "<path>", line <n>``, if it names one."""
    match = MARKER_RE.search(marker)
    if match is None:
        return None
    return match.group(1).decode("utf-8", "backslashreplace"), int(match.group(2))


def source_line(location: tuple[str, int] | None) -> str | None:
    """The stripped source line a marker points at, when the file is a readable .py."""
    if location is None:
        return None
    path, line = location
    if path.endswith((".pyc", ".pyo")) or line <= 0:
        return None
    text = linecache.getline(path, line).strip()
    return text or None


def _conflict_record(conflict: Conflict, start: float, total: float, buckets: int) -> dict:
    if conflict.buckets is not None:
        line = conflict.buckets
    else:
        line = timeline((t for times in conflict.times for t in times), start, total, buckets)
    texts = list(conflict.markers)
    if len(texts) == 2 and not texts[1]:
        texts = texts[:1]
    locations = [marker_location(m) for m in texts]
    return {
        "event": conflict.event,
        "markers": [marker_text(m) for m in texts],
        "count": conflict.count,
        "aborted_time": conflict.aborted_time,
        "paused_time": conflict.paused_time,
        "lost_time": conflict.aborted_time + conflict.paused_time,
        "sources": [source_line(loc) for loc in locations],
        "location": None if locations[0] is None else
        {"file": locations[0][0], "line": locations[0][1]},
        "timeline": line,
    }


def _ranked(conflicts: Iterable[Conflict]) -> list[Conflict]:
    # PyPy sorted ascending (stable, in first-seen order) and reversed the list:
    # largest first, and among equals the one seen last comes first.
    return sorted(conflicts, key=lambda c: (c.aborted_time + c.paused_time, c.first_seen),
                  reverse=True)


def _locations(conflicts: list[dict]) -> list[dict]:
    """Conflicts grouped by the file and line of their first marker."""
    groups: dict[tuple[str, int], dict] = {}
    for c in conflicts:
        if c["location"] is None:
            continue
        key = (c["location"]["file"], c["location"]["line"])
        group = groups.setdefault(key, {"file": key[0], "line": key[1], "source": c["sources"][0],
                                        "events": {}, "count": 0, "aborted_time": 0.0,
                                        "paused_time": 0.0})
        group["events"][c["event"]] = group["events"].get(c["event"], 0) + c["count"]
        group["count"] += c["count"]
        group["aborted_time"] += c["aborted_time"]
        group["paused_time"] += c["paused_time"]
    ranked = sorted(groups.values(), key=lambda g: g["aborted_time"] + g["paused_time"],
                    reverse=True)
    for group in ranked:
        group["lost_time"] = group["aborted_time"] + group["paused_time"]
    return ranked


def _fast_c8(source: LogInput, numbering: str,
             progress: ProgressCallback | None) -> tuple[Tally, list[str]]:
    """The C8 pass in C, reading through ``source``: the tally and the warnings."""
    table = table_for("c8", numbering)
    translate = bytearray([255] * 256)
    for raw, final in enumerate(table.to_final()):
        translate[raw] = final
    source.rewind()
    path = source.path
    try:
        events, first, last, stop, threads, conflicts = _fastc8.scan(
            source.read, source.position, source.size or 0, bytes(translate), progress,
            16 << 20, C8_TIMELINE_BUCKETS)
    except ValueError as exc:
        offset, kind, value, before = exc.args[0]
        problem = {"event": lambda: unknown_event_problem(int(value), numbering, len(table)),
                   "marker": lambda: long_marker_problem(int(value), C8_MAX_MARKER),
                   "time": lambda: decreasing_time_problem(value, before)}[kind]()
        raise LogError(path, offset, problem) from None
    warnings = []
    if events == 0:
        raise empty_log_error(path, source.position - stop)
    if stop < source.position:
        warnings.append(truncated_warning(path, stop, source.position - stop))
        log.warning("%s", warnings[-1])
    tally = Tally(first_time=first, last_time=last, seen=events)
    for (num, committed, aborted, paused, gc_minor, gc_major, n_commit, n_abort, count,
         first_event) in threads:
        tally.threads[num] = ThreadTotals(
            committed=committed, aborted=aborted, paused=paused, gc_minor=gc_minor,
            gc_major=gc_major, count_committed=n_commit, count_aborted=n_abort, events=count,
            first_event=first_event)
    for event, marker, count, aborted, paused, first_seen, buckets in conflicts:
        tally.conflicts[len(tally.conflicts)] = Conflict(
            C8_FINAL.names[event], (marker,), count, aborted, paused, first_seen,
            buckets=list(buckets))
    return tally, warnings


def _numpy_pass(source: LogInput, numbering: str, chunk_size: int | None,
                progress: ProgressCallback | None) -> tuple[Tally, list[str]]:
    """The chunked reader with the numpy C8 pass or the C7 loop: tally, warnings."""
    from stmlog_tools.reader import LogReader   # numpy: imported only on this path
    kwargs = {} if chunk_size is None else {"chunk_size": chunk_size}
    reader = LogReader(source, events=numbering, progress=progress, **kwargs)
    if reader.format == "c7":
        from stmlog_tools.c7 import C7Analyser
        analyser: Tally = C7Analyser(reader.markers)
    else:
        from stmlog_tools.c8numpy import C8Analyser
        analyser = C8Analyser(reader.markers)
    for chunk in reader.chunks():
        analyser.feed(chunk)   # type: ignore[attr-defined]
    return analyser, reader.warnings


def analyse(source: str | LogInput, events: str = "final",
            progress: ProgressCallback | None = None, chunk_size: int | None = None,
            engine: str = "auto") -> dict:
    """Read and analyse a log; the dict ``stmlog report --json`` prints.

    ``source`` is a path (``-``: stdin) or a :class:`LogInput` the caller
    opened with :func:`stmlog_tools.logfile.open_log` (its header checked
    once). ``events`` is a C8 numbering or "auto" (guessed). ``engine``
    picks the C8 pass: "c" (the optional C accelerator), "numpy"
    (vectorised, always there), or "auto" (C when built). C7 logs always use
    the C7 loop, whatever ``engine`` says. Raises :class:`stmlog_tools.logfile.LogError`
    for a log that cannot be read.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (expected one of {', '.join(ENGINES)})")
    if not isinstance(source, LogInput):
        with open_log(source) as opened:
            return analyse(opened, events, progress, chunk_size, engine)
    fmt = source.format
    if fmt == "c8" and engine == "c" and _fastc8 is None:
        raise RuntimeError("the C accelerator stmlog_tools._fastc8 is not built")
    numbering = resolve_numbering(source, events)
    if fmt == "c8" and engine != "numpy" and _fastc8 is not None:
        tally, warnings = _fast_c8(source, numbering, progress)
    else:
        tally, warnings = _numpy_pass(source, numbering, chunk_size, progress)
    start = tally.first_time or 0.0
    total = tally.last_time - start
    report: dict = {
        "file": source.path,
        "format": fmt,
        "events": numbering,
        "event_count": tally.seen,
        "start_time": start,
        "total_real_time": total,
    }
    report.update(_c8_figures(tally) if fmt == "c8" else _c7_figures(tally))
    buckets = C8_TIMELINE_BUCKETS if fmt == "c8" else C7_TIMELINE_BUCKETS
    conflicts = [_conflict_record(c, start, total, buckets)
                 for c in _ranked(tally.conflicts.values())]
    report["conflicts"] = conflicts
    report["locations"] = _locations(conflicts)
    report["warnings"] = list(warnings)
    return report


def _rate(part: float, whole: float) -> float | None:
    return None if whole == 0 else part / whole


def _transactions(in_order: list[ThreadTotals]) -> dict:
    """Commit and abort counts over all threads."""
    committed = sum(t.count_committed for t in in_order)
    aborted = sum(t.count_aborted for t in in_order)
    return {"committed": committed, "aborted": aborted, "total": committed + aborted,
            "abort_rate": _rate(aborted, committed + aborted)}


def _thread_counts(num: int, t: ThreadTotals) -> dict:
    return {"thread": num, "committed": t.count_committed, "aborted": t.count_aborted,
            "abort_rate": _rate(t.count_aborted, t.count_committed + t.count_aborted)}


def _c8_figures(tally: Tally) -> dict:
    in_order = tally.threads_by_appearance()
    cpu = {key: sum(getattr(t, key) for t in in_order)
           for key in ("committed", "aborted", "paused", "gc_minor", "gc_major")}
    cpu["total"] = cpu["committed"] + cpu["aborted"] + cpu["paused"]
    transactions = _transactions(in_order)
    transactions["per_second"] = _rate(transactions["total"], cpu["total"])
    return {
        "cpu_time": cpu,
        "transactions": transactions,
        "threads": [{
            **_thread_counts(num, t), "events": t.events,
            "cpu_time": {"committed": t.committed, "aborted": t.aborted, "paused": t.paused,
                         "total": t.committed + t.aborted + t.paused,
                         "gc_minor": t.gc_minor, "gc_major": t.gc_major},
        } for num, t in sorted(tally.threads.items())],
    }


def _c7_figures(tally: Tally) -> dict:
    return {
        "cpu_time": {"total": sum(t.cpu_total for t in tally.threads_by_appearance())},
        "transactions": _transactions(tally.threads_by_appearance()),
        "threads": [{**_thread_counts(num, t), "cpu_time": {"total": t.cpu_total}}
                    for num, t in sorted(tally.threads.items())],
    }


__all__ = ["analyse", "timeline", "source_line", "marker_location", "ENGINES"]
