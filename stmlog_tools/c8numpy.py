"""PyPy's C8 counting rules, vectorised with numpy, chunk by chunk.

The events of a chunk are grouped by thread; each group starts with one
"carry" row holding the thread's state from the previous chunk, so the
state machine (stop, run, pause, detached) becomes forward fills and
prefix sums over those rows. Time is charged at the events that move the
state machine, as PyPy's ``progress()`` did. Sums are added in another
order than PyPy's loop: figures agree to rounding (1e-12 s), not bit for
bit. The optional C pass (``stmlog_tools._fastc8``) applies the same rules
event by event; the tests hold both to a reference state machine.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from stmlog_tools.format import C8_FINAL
from stmlog_tools.reader import EventChunk
from stmlog_tools.tallies import Conflict, Tally, ThreadTotals

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



@dataclass
class ThreadCarry(ThreadTotals):
    """One thread's totals, and its state between chunks."""

    prev_time: float = 0.0
    state: int = STOP
    txn_cpu: float = 0.0
    txn_pause: float = 0.0
    aborting: bool = False
    inev_key: int = -1             # conflict key of the transaction's first inevitable event
    inev_time: float = math.nan
    wait_start: float = math.nan   # pending WAIT_OTHER_INEVITABLE time
    last_wait: int = -1
    minor_start: float = math.nan
    major_start: float = math.nan


def _ffill_index(valid: np.ndarray) -> np.ndarray:
    """For each row, the index of the last row at or before it where ``valid`` is True."""
    index = np.where(valid, np.arange(len(valid)), 0)
    return np.maximum.accumulate(index)


class _Rows:
    """One chunk's events as "extended rows": grouped by thread, each group led by a
    carry row holding the state the thread brought from the previous chunk.

    ``__init__`` lays the rows out; each stage of :meth:`C8Analyser.feed`
    then adds the arrays it computes (one value per row unless said), for
    the later stages to read. All are declared here, stage by stage.
    """

    # The layout (__init__).
    carries: list[ThreadCarry]    # one per group, in group order
    n: int                        # real rows (the chunk's events)
    groups: int                   # threads in the chunk, one carry row each
    carry_rows: np.ndarray        # index of each group's carry row
    is_carry: np.ndarray
    real: np.ndarray              # ~is_carry
    group_of_row: np.ndarray
    ev: np.ndarray                # final event number, -1 in carry rows
    time: np.ndarray              # the carry row holds the thread's last move time
    marker: np.ndarray
    global_index: np.ndarray      # position of the event in the whole log
    is_ev: list[np.ndarray]       # is_ev[k]: the row is event k
    previous: np.ndarray          # index of the row before (carry rows never use it)
    # _segments
    seg_head: np.ndarray          # a transaction's first row: START or the carry row
    seg_start_row: np.ndarray
    seg_is_carried: np.ndarray    # the transaction began in an earlier chunk
    # _last_wait
    last_wait: np.ndarray         # the latest wait event on the thread (-1: none)
    # _first_contentions
    carried_aborting: np.ndarray  # per group: a write-read was charged before this chunk
    wr_effective: np.ndarray      # the write-read contentions that count
    # _states
    state: np.ndarray             # state set by the row, INHERIT where it keeps it
    filled: np.ndarray            # state after the row
    # _charged_time
    move_row: np.ndarray          # the latest row that moved the state machine
    txn_cpu: np.ndarray           # the transaction's running time so far
    txn_pause: np.ndarray         # the transaction's paused time so far
    # _first_inevitable
    key_now: np.ndarray           # conflict key of the transaction's first inevitable event
    time_now: np.ndarray          # and its time
    # _pending_waits
    wait_now: np.ndarray          # start of the pending inevitable wait (nan: none)
    # _gc_sums
    open_gc: dict[str, np.ndarray]  # "minor"/"major": start of the open collection (nan)

    def __init__(self, chunk: EventChunk, seen: int, threads: dict[int, ThreadCarry]) -> None:
        order = np.argsort(chunk.thread, kind="stable")
        thread = chunk.thread[order]
        group_start = np.flatnonzero(np.concatenate(([True], thread[1:] != thread[:-1])))
        group_threads = thread[group_start].tolist()
        first_rows = order[group_start] + seen   # each group's earliest event
        self.carries = [threads.setdefault(t, ThreadCarry(first_event=int(first)))
                        for t, first in zip(group_threads, first_rows.tolist())]
        n, groups = len(order), len(group_start)
        self.n, self.groups = n, groups
        self.carry_rows = group_start + np.arange(groups)
        self.is_carry = np.zeros(n + groups, dtype=bool)
        self.is_carry[self.carry_rows] = True
        self.real = ~self.is_carry
        self.group_of_row = np.cumsum(self.is_carry) - 1
        self.ev = self.extend(chunk.event[order], 0, np.int16)
        self.ev[self.carry_rows] = -1
        self.time = self.extend(chunk.time[order], [c.prev_time for c in self.carries],
                                np.float64)
        self.marker = self.extend(chunk.marker[order], 0, np.int64)
        self.global_index = self.extend(order + seen, 0, np.int64)
        self.is_ev = [self.ev == k for k in range(len(C8_FINAL))]
        self.previous = np.roll(np.arange(n + groups), 1)

    def extend(self, values: np.ndarray, carry_values: Iterable[float | int] | int,
               dtype: object) -> np.ndarray:
        """``values`` in the real rows, one carried value per thread in its carry row."""
        out = np.empty(self.n + self.groups, dtype=dtype)
        out[self.real] = values
        out[self.carry_rows] = carry_values if isinstance(carry_values, int) else \
            np.fromiter(carry_values, dtype=dtype, count=self.groups)
        return out

    def carried(self, name: str, dtype: object) -> np.ndarray:
        """Each thread's carried ``name``, one value per group."""
        return np.array([getattr(c, name) for c in self.carries], dtype=dtype)

    def first_in_segment(self, rows: np.ndarray) -> np.ndarray:
        """For ``rows`` (ascending), whether each is the first of them in its transaction."""
        segment = self.seg_start_row[rows]
        first = np.ones(len(rows), dtype=bool)
        first[1:] = segment[1:] != segment[:-1]
        return first


class C8Analyser(Tally):
    """Feeds on EventChunks (final numbering) and accumulates PyPy's C8 figures.

    ``markers`` is the reader's marker table (ids in the chunks index it).
    """

    def __init__(self, markers: list[bytes]) -> None:
        super().__init__()
        self.markers = markers
        self.threads: dict[int, ThreadCarry] = {}   # type: ignore[assignment]

    def feed(self, chunk: EventChunk) -> None:
        """Add one chunk: the stages below, in order, over its extended rows."""
        if self.first_time is None:
            self.first_time = float(chunk.time[0])
        self.last_time = float(chunk.time[-1])
        rows = _Rows(chunk, self.seen, self.threads)
        _segments(rows)
        _last_wait(rows)
        _first_contentions(rows)
        _states(rows)
        _charged_time(rows)
        _first_inevitable(rows)
        _pending_waits(rows)
        self._charge_write_reads(rows)
        self._charge_inevitable_waits(rows)
        sums = _sums(rows) | _gc_sums(rows)
        _carry_out(rows, sums)
        self.seen += rows.n

    def _charge_write_reads(self, r: _Rows) -> None:
        """Each write-read contention that counts: charged the transaction's time so far."""
        wr = np.flatnonzero(r.wr_effective)
        self._charge(r.marker[wr] * 16 + WRITE_READ, r.txn_cpu[wr], r.txn_pause[wr],
                     r.time[wr], r.global_index[wr])

    def _charge_inevitable_waits(self, r: _Rows) -> None:
        """Each WAIT_DONE that ends a pending inevitable wait: the wait, as paused time,
        charged to the transaction's first BECOME_INEVITABLE (or REATTACH) event."""
        wait_start = r.wait_now[r.previous]
        charged = np.flatnonzero(r.is_ev[WAIT_DONE] & ~np.isnan(wait_start))
        waited = r.time[charged] - wait_start[charged]
        self._charge(r.key_now[charged], np.zeros(len(charged)), waited, r.time_now[charged],
                     r.global_index[charged])

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


def _segments(r: _Rows) -> None:
    """Segment: the rows of one transaction, from a START (or the carry row) on."""
    r.seg_head = r.is_carry | r.is_ev[START]
    r.seg_start_row = _ffill_index(r.seg_head)
    r.seg_is_carried = r.is_carry[r.seg_start_row]


def _last_wait(r: _Rows) -> None:
    """Last wait kind, for WAIT_DONE after WAIT_FREE_SEGMENT (back to stop)."""
    wait_rows = _IS_WAIT[np.maximum(r.ev, 0)] & r.real
    last_wait = np.where(wait_rows, r.ev,
                         r.extend(np.zeros(r.n), (c.last_wait for c in r.carries), np.int16))
    r.last_wait = last_wait[_ffill_index(wait_rows | r.is_carry)]


def _first_contentions(r: _Rows) -> None:
    """First write-read contention per transaction: later ones are ignored."""
    wr_rows = np.flatnonzero(r.is_ev[WRITE_READ])
    first_in_seg = r.first_in_segment(wr_rows)
    r.carried_aborting = r.carried("aborting", bool)
    already = r.seg_is_carried[wr_rows] & r.carried_aborting[r.group_of_row[wr_rows]]
    r.wr_effective = np.zeros(r.n + r.groups, dtype=bool)
    r.wr_effective[wr_rows[first_in_seg & ~already]] = True


def _states(r: _Rows) -> None:
    """State after each row (INHERIT where the row keeps it; ``filled``: forward-filled)."""
    state = _STATE_AFTER[np.maximum(r.ev, 0)].astype(np.int8)
    state[r.carry_rows] = [c.state for c in r.carries]
    done_after_free = r.is_ev[WAIT_DONE] & (r.last_wait[r.previous] == WAIT_FREE_SEGMENT)
    state[done_after_free] = STOP
    state[r.is_ev[WRITE_READ] & ~r.wr_effective] = INHERIT
    filled = state[_ffill_index(state != INHERIT)]
    detached_minor = r.is_ev[MINOR_START] & (filled[r.previous] == DETACHED)
    if detached_minor.any():
        state[detached_minor] = RUN
        filled = state[_ffill_index(state != INHERIT)]
    r.state, r.filled = state, filled


def _charged_time(r: _Rows) -> None:
    """Time is charged at the events that move the state machine (PyPy's progress()):
    since the previous such event, to the state it set."""
    moves = r.state != INHERIT
    r.move_row = _ffill_index(moves)
    last_move = r.move_row[r.previous]
    dt = np.where(moves & r.real, r.time - r.time[last_move], 0.0)
    before = r.filled[r.previous]
    run_cum = np.cumsum(np.where(before == RUN, dt, 0.0))
    pause_cum = np.cumsum(np.where(before == PAUSE, dt, 0.0))
    # Transaction counters: reset at START before START's own interval is added.
    zeros = np.zeros(r.n)
    base_run = np.where(r.is_carry, run_cum - r.extend(zeros, (c.txn_cpu for c in r.carries),
                                                       np.float64), run_cum[r.previous])
    base_pause = np.where(r.is_carry, pause_cum - r.extend(zeros,
                                                           (c.txn_pause for c in r.carries),
                                                           np.float64), pause_cum[r.previous])
    r.txn_cpu = run_cum - base_run[r.seg_start_row]
    r.txn_pause = pause_cum - base_pause[r.seg_start_row]


def _first_inevitable(r: _Rows) -> None:
    """The conflict key and time of each transaction's first BECOME_INEVITABLE (or
    REATTACH) event, which its inevitable waits are charged to."""
    inev_rows = np.flatnonzero(r.is_ev[INEVITABLE] | r.is_ev[REATTACH])
    inev_key = np.full(r.n + r.groups, -1, dtype=np.int64)
    inev_time = np.full(r.n + r.groups, np.nan)
    carried_key = r.carried("inev_key", np.int64)
    inev_key[r.carry_rows] = carried_key
    inev_time[r.carry_rows] = r.carried("inev_time", np.float64)
    # The first in its transaction, unless the transaction brought one from the last chunk.
    chosen = inev_rows[r.first_in_segment(inev_rows)
                       & ~(r.seg_is_carried[inev_rows]
                           & (carried_key[r.group_of_row[inev_rows]] >= 0))]
    inev_key[chosen] = r.marker[chosen] * 16 + r.ev[chosen]
    inev_time[chosen] = r.time[chosen]
    holder = _ffill_index((inev_key >= 0) | r.seg_head)
    r.key_now = inev_key[holder]
    r.time_now = inev_time[holder]


def _pending_waits(r: _Rows) -> None:
    """Pending wait start: set by WAIT_OTHER_INEVITABLE when inevitable, cleared by
    WAIT_DONE and START."""
    sets_wait = r.is_ev[WAIT_OTHER_INEVITABLE] & (r.key_now >= 0)
    wait_value = np.where(sets_wait, r.time, np.nan)
    wait_value[r.carry_rows] = r.carried("wait_start", np.float64)
    r.wait_now = wait_value[_ffill_index(sets_wait | r.is_ev[WAIT_DONE] | r.seg_head)]


def _sums(r: _Rows) -> dict[str, np.ndarray]:
    """Per-thread sums of the chunk: CPU time by outcome, counts, events."""
    group, groups = r.group_of_row, r.groups
    commit, abort = r.is_ev[COMMIT], r.is_ev[ABORT]
    return {
        "committed": np.bincount(group, np.where(commit, r.txn_cpu, 0.0), groups),
        "aborted": np.bincount(group, np.where(abort, r.txn_cpu, 0.0), groups),
        "paused": np.bincount(group, np.where(commit | abort, r.txn_pause, 0.0), groups),
        "count_committed": np.bincount(group, commit, groups),
        "count_aborted": np.bincount(group, abort, groups),
        "events": np.bincount(group[r.real], minlength=groups),
    }


def _gc_sums(r: _Rows) -> dict[str, np.ndarray]:
    """Per-thread GC time of the chunk: START .. DONE pairs (a START forgets an open
    minor collection). Keeps what is still open in ``r.open_gc``."""
    sums = {}
    r.open_gc = {}
    for start_ev, done_ev, kind, resets in ((MINOR_START, MINOR_DONE, "minor", r.seg_head),
                                            (MAJOR_START, MAJOR_DONE, "major", r.is_carry)):
        opened = np.where(r.is_ev[start_ev], r.time, np.nan)
        opened[r.carry_rows] = r.carried(kind + "_start", np.float64)
        open_now = opened[_ffill_index(r.is_ev[start_ev] | r.is_ev[done_ev] | resets)]
        open_before = open_now[r.previous]
        closing = r.is_ev[done_ev] & ~np.isnan(open_before)
        sums["gc_" + kind] = np.bincount(
            r.group_of_row, np.where(closing, r.time - open_before, 0.0), r.groups)
        r.open_gc[kind] = open_now
    return sums


def _carry_out(r: _Rows, sums: dict[str, np.ndarray]) -> None:
    """Carry the state of each thread's last row to the next chunk, and add its sums."""
    last_rows = np.concatenate((r.carry_rows[1:] - 1, [r.n + r.groups - 1]))
    aborting_now = r.wr_effective[_ffill_index(r.wr_effective | r.seg_head)]
    aborting_carried = r.carried_aborting[r.group_of_row] & r.seg_is_carried
    for g, carry in enumerate(r.carries):
        row = int(last_rows[g])
        carry.prev_time = float(r.time[r.move_row[row]])
        carry.state = int(r.filled[row])
        carry.txn_cpu = float(r.txn_cpu[row])
        carry.txn_pause = float(r.txn_pause[row])
        carry.aborting = bool(aborting_now[row] or aborting_carried[row])
        carry.inev_key = int(r.key_now[row])
        carry.inev_time = float(r.time_now[row])
        carry.wait_start = float(r.wait_now[row])
        carry.last_wait = int(r.last_wait[row])
        carry.minor_start = float(r.open_gc["minor"][row])
        carry.major_start = float(r.open_gc["major"][row])
        for name, values in sums.items():
            current = getattr(carry, name)
            setattr(carry, name, current + type(current)(values[g]))
