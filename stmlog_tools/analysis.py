"""Analyse a PYPYSTM log with PyPy's arithmetic, and go further; build the report dict.

Interface (stable, others rely on it)::

    from stmlog_tools.analysis import analyse
    report = analyse("run.log", events="final")   # the dict `stmlog report --json` prints

The schema is documented in docs/stmlog.md. In short: ``format``,
``events``, ``total_real_time``, ``cpu_time``, ``transactions``,
``threads`` (per-thread figures), ``conflicts`` (all of them, ranked as
PyPy ranked them: by aborted + paused time, largest first), ``locations``
(conflicts grouped by source file and line), ``warnings``.

C8 follows the rules of PyPy's final C8 analyser (see
../shared/docs/pypystm-log-format.md): each thread is a state machine
(stop, run, pause, detached) whose time between events is charged to the
current transaction. The C8 pass is vectorised per chunk with numpy: the
events of a chunk are grouped by thread, each group starts with one
"carry" row holding the thread's state from the previous chunk, and the
state machine becomes forward fills and prefix sums over those rows.
Sums are therefore added in another order than PyPy's loop did: figures
agree to rounding (1e-12 s), not bit for bit.

C7 logs (older, and small) go through a plain per-event loop.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from stmlog_tools.format import C7_EVENTS, C8_FINAL, C8_MAX_MARKER, HEADER_SIZE
from stmlog_tools.reader import (
    EventChunk, LogError, LogReader, ProgressCallback, decreasing_time_problem,
    long_marker_problem, truncated_warning, unknown_event_problem,
)

try:   # the optional C accelerator of the C8 pass (built by setup.py where it can be)
    from stmlog_tools import _fastc8
except ImportError:
    _fastc8 = None

log = logging.getLogger(__name__)

#: Choices for the C8 pass of :func:`analyse`.
ENGINES = ("auto", "c", "numpy")

# C8 final event numbers, short names for the vectorised code below.
_E = C8_FINAL.numbers
START, COMMIT, ABORT = _E["STM_TRANSACTION_START"], _E["STM_TRANSACTION_COMMIT"], \
    _E["STM_TRANSACTION_ABORT"]
DETACH, REATTACH = _E["STM_TRANSACTION_DETACH"], _E["STM_TRANSACTION_REATTACH"]
INEVITABLE, WRITE_READ = _E["STM_BECOME_INEVITABLE"], _E["STM_CONTENTION_WRITE_READ"]
WAIT_FREE_SEGMENT, WAIT_OTHER_INEVITABLE = _E["STM_WAIT_FREE_SEGMENT"], \
    _E["STM_WAIT_OTHER_INEVITABLE"]
WAITS = (WAIT_FREE_SEGMENT, _E["STM_WAIT_SYNCING"], _E["STM_WAIT_SYNC_PAUSE"],
         WAIT_OTHER_INEVITABLE)
WAIT_DONE = _E["STM_WAIT_DONE"]
MINOR_START, MINOR_DONE = _E["STM_GC_MINOR_START"], _E["STM_GC_MINOR_DONE"]
MAJOR_START, MAJOR_DONE = _E["STM_GC_MAJOR_START"], _E["STM_GC_MAJOR_DONE"]

# Thread states, as in PyPy's analyser. INHERIT marks events that keep the state.
STOP, RUN, PAUSE, DETACHED, INHERIT = 0, 1, 2, 3, -1

#: What each C8 event sets the state to, before the rules that look back.
_STATE_AFTER = np.full(len(C8_FINAL), INHERIT, dtype=np.int8)
_STATE_AFTER[[START, REATTACH, INEVITABLE, WAIT_DONE, WRITE_READ]] = RUN
_STATE_AFTER[[COMMIT, ABORT]] = STOP
_STATE_AFTER[DETACH] = DETACHED
_STATE_AFTER[list(WAITS)] = PAUSE

_IS_WAIT = np.zeros(len(C8_FINAL), dtype=bool)
_IS_WAIT[list(WAITS)] = True

MARKER_RE = re.compile(rb'File "(.+)", line (\d+)')

#: Width of PyPy's conflict time lines: 60 buckets for C8, 48 for C7.
C8_TIMELINE_BUCKETS = 60
C7_TIMELINE_BUCKETS = 48


@dataclass
class ThreadCarry:
    """One C8 thread's state between chunks, and its running totals."""

    prev_time: float = 0.0
    state: int = STOP
    txn_cpu: float = 0.0
    txn_pause: float = 0.0
    aborting: bool = False
    inev_key: int = -1          # conflict key of the transaction's first inevitable event
    inev_time: float = math.nan
    wait_start: float = math.nan   # pending WAIT_OTHER_INEVITABLE time
    last_wait: int = -1
    minor_start: float = math.nan
    major_start: float = math.nan
    committed: float = 0.0
    aborted: float = 0.0
    paused: float = 0.0
    gc_minor: float = 0.0
    gc_major: float = 0.0
    count_committed: int = 0
    count_aborted: int = 0
    events: int = 0


@dataclass
class Conflict:
    """Time lost to one (event, markers) pair, with the times it happened."""

    event: str
    markers: tuple[bytes, ...]
    count: int = 0
    aborted_time: float = 0.0
    paused_time: float = 0.0
    first_seen: int = 0      # global index of the first event that charged it
    times: list[np.ndarray] = field(default_factory=list)

    def all_times(self) -> np.ndarray:
        return np.concatenate(self.times) if self.times else np.empty(0)


def _ffill_index(valid: np.ndarray) -> np.ndarray:
    """For each row, the index of the last row at or before it where ``valid`` is True."""
    index = np.where(valid, np.arange(len(valid)), 0)
    return np.maximum.accumulate(index)


class C8Analyser:
    """Feeds on EventChunks (final numbering) and accumulates PyPy's C8 figures.

    ``markers`` is the reader's marker table (ids in the chunks index it).
    """

    def __init__(self, markers: list[bytes]) -> None:
        self.markers = markers
        self.threads: dict[int, ThreadCarry] = {}
        self.conflicts: dict[int, Conflict] = {}   # key = marker_id * 16 + event
        self.first_time: float | None = None
        self.last_time = 0.0
        self.seen = 0

    def feed(self, chunk: EventChunk) -> None:
        if self.first_time is None:
            self.first_time = float(chunk.time[0])
        self.last_time = float(chunk.time[-1])
        order = np.argsort(chunk.thread, kind="stable")
        thread = chunk.thread[order]
        group_start = np.flatnonzero(np.concatenate(([True], thread[1:] != thread[:-1])))
        group_threads = thread[group_start].tolist()
        carries = [self.threads.setdefault(t, ThreadCarry()) for t in group_threads]
        # Extended rows: one carry row in front of each thread's events.
        n, groups = len(order), len(group_start)
        carry_rows = group_start + np.arange(groups)
        is_carry = np.zeros(n + groups, dtype=bool)
        is_carry[carry_rows] = True
        real = ~is_carry
        group_of_row = np.cumsum(is_carry) - 1

        def extend(values: np.ndarray, carry_values: Iterable[float | int], dtype: object) -> np.ndarray:
            out = np.empty(n + groups, dtype=dtype)
            out[real] = values
            out[carry_rows] = np.fromiter(carry_values, dtype=dtype, count=groups)
            return out

        ev = extend(chunk.event[order], (0 for _ in carries), np.int16)
        ev[carry_rows] = -1
        time = extend(chunk.time[order], (c.prev_time for c in carries), np.float64)
        marker = extend(chunk.marker[order], (0 for _ in carries), np.int64)
        global_index = extend(order + self.seen, (0 for _ in carries), np.int64)
        is_ev = [ev == k for k in range(len(C8_FINAL))]

        # Segment: the rows of one transaction, from a START (or the carry row) on.
        seg_head = is_carry | is_ev[START]
        seg_start_row = _ffill_index(seg_head)
        seg_is_carried = is_carry[seg_start_row]

        # Last wait kind, for WAIT_DONE after WAIT_FREE_SEGMENT (back to stop).
        wait_rows = _IS_WAIT[np.maximum(ev, 0)] & real
        last_wait = np.where(wait_rows, ev, extend(np.zeros(n), (c.last_wait for c in carries),
                                                   np.int16))
        last_wait = last_wait[_ffill_index(wait_rows | is_carry)]
        previous = np.roll(np.arange(n + groups), 1)   # row before (carry rows never use it)

        # First write-read contention per transaction: later ones are ignored.
        wr_rows = np.flatnonzero(is_ev[WRITE_READ])
        wr_seg = seg_start_row[wr_rows]
        first_in_seg = np.ones(len(wr_rows), dtype=bool)
        first_in_seg[1:] = wr_seg[1:] != wr_seg[:-1]
        carried_aborting = np.array([c.aborting for c in carries], dtype=bool)
        already = seg_is_carried[wr_rows] & carried_aborting[group_of_row[wr_rows]]
        wr_effective = np.zeros(n + groups, dtype=bool)
        wr_effective[wr_rows[first_in_seg & ~already]] = True

        # State after each row.
        state = _STATE_AFTER[np.maximum(ev, 0)].astype(np.int8)
        state[carry_rows] = [c.state for c in carries]
        done_after_free = is_ev[WAIT_DONE] & (last_wait[previous] == WAIT_FREE_SEGMENT)
        state[done_after_free] = STOP
        state[is_ev[WRITE_READ] & ~wr_effective] = INHERIT
        filled = state[_ffill_index(state != INHERIT)]
        detached_minor = is_ev[MINOR_START] & (filled[previous] == DETACHED)
        if detached_minor.any():
            state[detached_minor] = RUN
            filled = state[_ffill_index(state != INHERIT)]

        # Time is charged at the events that move the state machine (PyPy's
        # progress()): since the previous such event, to the state it set.
        moves = state != INHERIT
        move_row = _ffill_index(moves)
        last_move = move_row[previous]
        dt = np.where(moves & real, time - time[last_move], 0.0)
        before = filled[previous]
        run_cum = np.cumsum(np.where(before == RUN, dt, 0.0))
        pause_cum = np.cumsum(np.where(before == PAUSE, dt, 0.0))
        # Transaction counters: reset at START before START's own interval is added.
        base_run = np.where(is_carry, run_cum - extend(np.zeros(n), (c.txn_cpu for c in carries),
                                                       np.float64), run_cum[previous])
        base_pause = np.where(is_carry, pause_cum - extend(np.zeros(n),
                                                           (c.txn_pause for c in carries),
                                                           np.float64), pause_cum[previous])
        txn_cpu = run_cum - base_run[seg_start_row]
        txn_pause = pause_cum - base_pause[seg_start_row]

        group_real = group_of_row[real]
        weights = {"commit": is_ev[COMMIT], "abort": is_ev[ABORT]}
        sums = {
            "committed": np.bincount(group_of_row, np.where(weights["commit"], txn_cpu, 0.0),
                                     groups),
            "aborted": np.bincount(group_of_row, np.where(weights["abort"], txn_cpu, 0.0),
                                   groups),
            "paused": np.bincount(group_of_row,
                                  np.where(weights["commit"] | weights["abort"], txn_pause, 0.0),
                                  groups),
            "count_committed": np.bincount(group_of_row, weights["commit"], groups),
            "count_aborted": np.bincount(group_of_row, weights["abort"], groups),
            "events": np.bincount(group_real, minlength=groups),
        }

        # Write-read conflicts: charged the transaction's time so far.
        wr = np.flatnonzero(wr_effective)
        self._charge(marker[wr] * 16 + WRITE_READ, txn_cpu[wr], txn_pause[wr], time[wr],
                     global_index[wr])

        # Inevitable waits: WAIT_OTHER_INEVITABLE .. WAIT_DONE, charged to the
        # transaction's first BECOME_INEVITABLE (or REATTACH) event.
        inev_rows = np.flatnonzero(is_ev[INEVITABLE] | is_ev[REATTACH])
        inev_seg = seg_start_row[inev_rows]
        first_inev = np.ones(len(inev_rows), dtype=bool)
        first_inev[1:] = inev_seg[1:] != inev_seg[:-1]
        inev_key = np.full(n + groups, -1, dtype=np.int64)
        inev_time = np.full(n + groups, np.nan)
        carried_key = np.array([c.inev_key for c in carries], dtype=np.int64)
        inev_key[carry_rows] = carried_key
        inev_time[carry_rows] = [c.inev_time for c in carries]
        chosen = inev_rows[first_inev & ~(seg_is_carried[inev_rows]
                                          & (carried_key[group_of_row[inev_rows]] >= 0))]
        inev_key[chosen] = marker[chosen] * 16 + ev[chosen]
        inev_time[chosen] = time[chosen]
        holder = _ffill_index((inev_key >= 0) | seg_head)
        key_now = inev_key[holder]
        time_now = inev_time[holder]
        # Pending wait start: set by WAIT_OTHER_INEVITABLE when inevitable, cleared by
        # WAIT_DONE and START.
        sets_wait = is_ev[WAIT_OTHER_INEVITABLE] & (key_now >= 0)
        wait_value = np.where(sets_wait, time, np.nan)
        wait_value[carry_rows] = [c.wait_start for c in carries]
        wait_now = wait_value[_ffill_index(sets_wait | is_ev[WAIT_DONE] | seg_head)]
        charged = np.flatnonzero(is_ev[WAIT_DONE] & ~np.isnan(wait_now[previous]))
        waited = time[charged] - wait_now[previous][charged]
        self._charge(key_now[charged], np.zeros(len(charged)), waited, time_now[charged],
                     global_index[charged])

        # GC time: START .. DONE pairs (a START forgets an open minor collection).
        open_gc = {}
        for start_ev, done_ev, kind, resets in ((MINOR_START, MINOR_DONE, "minor", seg_head),
                                                (MAJOR_START, MAJOR_DONE, "major", is_carry)):
            opened = np.where(is_ev[start_ev], time, np.nan)
            opened[carry_rows] = [getattr(c, kind + "_start") for c in carries]
            open_now = opened[_ffill_index(is_ev[start_ev] | is_ev[done_ev] | resets)]
            closing = is_ev[done_ev] & ~np.isnan(open_now[previous])
            sums["gc_" + kind] = np.bincount(
                group_of_row, np.where(closing, time - open_now[previous], 0.0), groups)
            open_gc[kind] = open_now

        # Carry the state of each thread's last row to the next chunk.
        last_rows = np.concatenate((carry_rows[1:] - 1, [n + groups - 1]))
        aborting_rows = wr_effective | seg_head
        aborting_now = wr_effective[_ffill_index(aborting_rows)]
        aborting_carried = carried_aborting[group_of_row] & seg_is_carried
        for g, carry in enumerate(carries):
            row = int(last_rows[g])
            carry.prev_time = float(time[move_row[row]])
            carry.state = int(filled[row])
            carry.txn_cpu = float(txn_cpu[row])
            carry.txn_pause = float(txn_pause[row])
            carry.aborting = bool(aborting_now[row] or aborting_carried[row])
            carry.inev_key = int(key_now[row])
            carry.inev_time = float(time_now[row])
            carry.wait_start = float(wait_now[row])
            carry.last_wait = int(last_wait[row])
            carry.minor_start = float(open_gc["minor"][row])
            carry.major_start = float(open_gc["major"][row])
            for name, values in sums.items():
                current = getattr(carry, name)
                setattr(carry, name, current + type(current)(values[g]))
        self.seen += n

    def _charge(self, keys: np.ndarray, aborted: np.ndarray, paused: np.ndarray,
                times: np.ndarray, positions: np.ndarray) -> None:
        """Add charges to conflicts keyed by marker_id * 16 + event."""
        if len(keys) == 0:
            return
        unique, inverse = np.unique(keys, return_inverse=True)
        aborted_sum = np.bincount(inverse, aborted, len(unique))
        paused_sum = np.bincount(inverse, paused, len(unique))
        counts = np.bincount(inverse, minlength=len(unique))
        first = np.full(len(unique), np.iinfo(np.int64).max)
        np.minimum.at(first, inverse, positions)
        for i, key in enumerate(unique.tolist()):
            conflict = self.conflicts.get(key)
            if conflict is None:
                conflict = self.conflicts[key] = Conflict(
                    C8_FINAL.names[key % 16], (self.markers[key // 16],),
                    first_seen=int(first[i]))
            conflict.count += int(counts[i])
            conflict.aborted_time += float(aborted_sum[i])
            conflict.paused_time += float(paused_sum[i])
            conflict.times.append(times[inverse == i])


class C7Analyser:
    """PyPy's C7 analyser: per-transaction CPU time and contention conflicts (a plain loop)."""

    PAUSE_AFTER_ABORT = 0.000001   # stmgc slept 1 us after every abort

    def __init__(self, markers: list[bytes]) -> None:
        self.markers = markers
        self.threads: dict[int, dict] = {}
        self.conflicts: dict[tuple[int, int, int], Conflict] = {}
        self.first_time: float | None = None
        self.last_time = 0.0
        self.seen = 0

    def feed(self, chunk: EventChunk) -> None:
        names = C7_EVENTS.numbers
        start, commit, abort = (names["STM_TRANSACTION_START"], names["STM_TRANSACTION_COMMIT"],
                                names["STM_TRANSACTION_ABORT"])
        contention = {names["STM_CONTENTION_WRITE_WRITE"], names["STM_CONTENTION_WRITE_READ"],
                      names["STM_CONTENTION_INEVITABLE"]}
        aborting_other = names["STM_ABORTING_OTHER_CONTENTION"]
        waits = {names["STM_WAIT_SYNC_PAUSE"], names["STM_WAIT_CONTENTION"],
                 names["STM_WAIT_FREE_SEGMENT"]}
        wait_done = names["STM_WAIT_DONE"]
        if self.first_time is None:
            self.first_time = float(chunk.time[0])
        self.last_time = float(chunk.time[-1])
        threads = self.threads
        columns = (chunk.time.tolist(), chunk.thread.tolist(), chunk.other_thread.tolist(),
                   chunk.event.tolist(), chunk.marker.tolist(), chunk.marker2.tolist())
        for index, (time, thread, other, event, m1, m2) in enumerate(zip(*columns)):
            t = threads.get(thread)
            if event == start:
                if t is None:
                    t = threads[thread] = {"cpu": 0.0, "committed": 0, "aborted": 0,
                                           "conflict": None}
                t.update(start=time, conflict=None, pause=None, paused=0.0)
            elif event in contention:
                # Counted whatever the thread does; attached only to a running transaction.
                conflict = self._conflict(event, m1, m2, self.seen + index)
                conflict.count += 1
                conflict.times.append(np.array([time]))
                if t is not None and t["start"] is not None:
                    t["conflict"] = ("local", conflict)
            elif t is None:
                continue   # a thread is known from its first START on, as in PyPy
            elif event == aborting_other:
                if t["conflict"] is not None and t["conflict"][0] == "local":
                    conflict = t["conflict"][1]
                    t["conflict"] = None
                    victim = threads.get(other)
                    if victim is not None and victim["start"] is not None:
                        victim["conflict"] = ("remote", conflict)
            elif t["start"] is None:
                continue   # the other events count only inside a transaction
            elif event in (commit, abort):
                spent = time - t["start"] - t["paused"]
                t["cpu"] += spent
                t["committed" if event == commit else "aborted"] += 1
                t["start"] = t["pause"] = None
                if t["conflict"] is not None and event == abort:
                    conflict = t["conflict"][1]
                    conflict.aborted_time += spent
                    conflict.paused_time += self.PAUSE_AFTER_ABORT
                    t["conflict"] = None
            elif event in waits:
                t["pause"] = time
            elif event == wait_done and t["pause"] is not None:
                pause = time - t["pause"]
                t["paused"] += pause
                t["pause"] = None
                if t["conflict"] is not None and t["conflict"][0] == "local":
                    t["conflict"][1].paused_time += pause
                    t["conflict"] = None
        self.seen += len(chunk)

    def _conflict(self, event: int, m1: int, m2: int, position: int) -> Conflict:
        key = (event, m1, m2)
        conflict = self.conflicts.get(key)
        if conflict is None:
            conflict = self.conflicts[key] = Conflict(
                C7_EVENTS.names[event], (self.markers[m1], self.markers[m2]),
                first_seen=position)
        return conflict


def percent(part: float, total: float) -> str:
    """PyPy's percentage: one decimal, dropped when longer than 3 characters."""
    if total == 0:
        return "n/a"
    text = "%.1f" % (part * 100.0 / total)
    if len(text) > 3:
        text = text.split(".")[0]
    return text + "%"


def timeline(times: np.ndarray, start: float, total: float, buckets: int) -> list[int]:
    """How many of ``times`` fall in each of ``buckets`` equal slices of the run."""
    if total <= 0:
        counts = np.zeros(buckets, dtype=np.int64)
        counts[0] = len(times)
        return counts.tolist()
    index = np.minimum(((times - start) / total * buckets).astype(np.int64), buckets - 1)
    return np.bincount(np.maximum(index, 0), minlength=buckets).tolist()


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
    import linecache
    text = linecache.getline(path, line).strip()
    return text or None


def _conflict_record(conflict: Conflict, start: float, total: float, buckets: int) -> dict:
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
        "timeline": timeline(conflict.all_times(), start, total, buckets),
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


def _fast_c8(reader: LogReader, progress: ProgressCallback | None) -> C8Analyser:
    """The C8 pass in C (stmlog_tools._fastc8), returned as a filled C8Analyser."""
    translate = bytearray([255] * 256)
    for raw, final in enumerate(reader.table.to_final()):
        translate[raw] = final
    try:
        events, first, last, stop, threads, conflicts = _fastc8.scan(
            reader.path, HEADER_SIZE, bytes(translate), progress, 16 << 20)
    except ValueError as exc:
        offset, kind, value, before = exc.args[0]
        problem = {"event": lambda: unknown_event_problem(int(value), reader.numbering,
                                                          len(reader.table)),
                   "marker": lambda: long_marker_problem(int(value), C8_MAX_MARKER),
                   "time": lambda: decreasing_time_problem(value, before)}[kind]()
        raise LogError(reader.path, offset, problem) from None
    except OSError as exc:
        raise LogError(reader.path, None, f"cannot read: {exc.strerror or exc}") from None
    if stop < reader.size:
        reader.warnings.append(truncated_warning(reader.path, stop, reader.size - stop))
        log.warning("%s", reader.warnings[-1])
    if events == 0:
        raise LogError(reader.path, HEADER_SIZE, "empty log: no complete event after the header")
    analyser = C8Analyser(reader.markers)
    analyser.first_time, analyser.last_time, analyser.seen = first, last, events
    for num, committed, aborted, paused, gc_minor, gc_major, n_commit, n_abort, count in threads:
        analyser.threads[num] = ThreadCarry(
            committed=committed, aborted=aborted, paused=paused, gc_minor=gc_minor,
            gc_major=gc_major, count_committed=n_commit, count_aborted=n_abort, events=count)
    for event, marker, count, aborted, paused, first_seen, times in conflicts:
        analyser.conflicts[len(analyser.conflicts)] = Conflict(
            C8_FINAL.names[event], (marker,), count, aborted, paused, first_seen,
            [np.frombuffer(times, dtype=np.float64)])
    return analyser


def analyse(path: str, events: str = "final", progress: ProgressCallback | None = None,
            chunk_size: int | None = None, engine: str = "auto") -> dict:
    """Read and analyse the log at ``path``; the dict ``stmlog report --json`` prints.

    ``engine`` picks the C8 pass: "c" (the optional C accelerator), "numpy"
    (vectorised, always there), or "auto" (C when built). C7 logs always use
    the Python loop. Raises :class:`stmlog_tools.reader.LogError` for a log
    that cannot be read.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (expected one of {', '.join(ENGINES)})")
    kwargs = {} if chunk_size is None else {"chunk_size": chunk_size}
    reader = LogReader(path, events=events, progress=progress, **kwargs)
    analyser: C8Analyser | C7Analyser
    use_c = reader.format == "c8" and engine != "numpy" and _fastc8 is not None
    if engine == "c" and not use_c:
        raise RuntimeError("the C accelerator stmlog_tools._fastc8 is not built")
    if use_c:
        analyser = _fast_c8(reader, progress)
    else:
        analyser = C7Analyser(reader.markers) if reader.format == "c7" \
            else C8Analyser(reader.markers)
        for chunk in reader.chunks():
            analyser.feed(chunk)
    start = analyser.first_time or 0.0
    total = analyser.last_time - start
    report: dict = {
        "file": reader.path,
        "format": reader.format,
        "events": reader.numbering,
        "event_count": analyser.seen,
        "start_time": start,
        "total_real_time": total,
    }
    if isinstance(analyser, C8Analyser):
        report.update(_c8_figures(analyser, total))
        buckets = C8_TIMELINE_BUCKETS
    else:
        report.update(_c7_figures(analyser, total))
        buckets = C7_TIMELINE_BUCKETS
    conflicts = [_conflict_record(c, start, total, buckets)
                 for c in _ranked(analyser.conflicts.values())]
    report["conflicts"] = conflicts
    report["locations"] = _locations(conflicts)
    report["warnings"] = list(reader.warnings)
    return report


def _rate(part: float, whole: float) -> float | None:
    return None if whole == 0 else part / whole


def _c8_figures(analyser: C8Analyser, total: float) -> dict:
    threads = sorted(analyser.threads.items())
    committed = sum(t.committed for _, t in threads)
    aborted = sum(t.aborted for _, t in threads)
    paused = sum(t.paused for _, t in threads)
    cpu_total = committed + aborted + paused
    n_committed = sum(t.count_committed for _, t in threads)
    n_aborted = sum(t.count_aborted for _, t in threads)
    n_total = n_committed + n_aborted
    return {
        "cpu_time": {
            "committed": committed, "aborted": aborted, "paused": paused, "total": cpu_total,
            "gc_minor": sum(t.gc_minor for _, t in threads),
            "gc_major": sum(t.gc_major for _, t in threads),
        },
        "transactions": {
            "committed": n_committed, "aborted": n_aborted, "total": n_total,
            "per_second": _rate(n_total, cpu_total),
            "abort_rate": _rate(n_aborted, n_total),
        },
        "threads": [{
            "thread": num, "events": t.events,
            "committed": t.count_committed, "aborted": t.count_aborted,
            "abort_rate": _rate(t.count_aborted, t.count_committed + t.count_aborted),
            "cpu_time": {"committed": t.committed, "aborted": t.aborted, "paused": t.paused,
                         "total": t.committed + t.aborted + t.paused,
                         "gc_minor": t.gc_minor, "gc_major": t.gc_major},
        } for num, t in threads],
    }


def _c7_figures(analyser: C7Analyser, total: float) -> dict:
    threads = sorted(analyser.threads.items())
    cpu_total = sum(t["cpu"] for _, t in threads)
    n_committed = sum(t["committed"] for _, t in threads)
    n_aborted = sum(t["aborted"] for _, t in threads)
    n_total = n_committed + n_aborted
    return {
        "cpu_time": {"total": cpu_total},
        "transactions": {"committed": n_committed, "aborted": n_aborted, "total": n_total,
                         "abort_rate": _rate(n_aborted, n_total)},
        "threads": [{
            "thread": num, "committed": t["committed"], "aborted": t["aborted"],
            "abort_rate": _rate(t["aborted"], t["committed"] + t["aborted"]),
            "cpu_time": {"total": t["cpu"]},
        } for num, t in threads],
    }


__all__ = ["analyse", "percent", "timeline", "source_line", "marker_location",
           "C8Analyser", "C7Analyser", "ENGINES"]
