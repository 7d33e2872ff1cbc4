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


class C8Analyser(Tally):
    """Feeds on EventChunks (final numbering) and accumulates PyPy's C8 figures.

    ``markers`` is the reader's marker table (ids in the chunks index it).
    """

    def __init__(self, markers: list[bytes]) -> None:
        super().__init__()
        self.markers = markers
        self.threads: dict[int, ThreadCarry] = {}   # type: ignore[assignment]

    def feed(self, chunk: EventChunk) -> None:
        if self.first_time is None:
            self.first_time = float(chunk.time[0])
        self.last_time = float(chunk.time[-1])
        order = np.argsort(chunk.thread, kind="stable")
        thread = chunk.thread[order]
        group_start = np.flatnonzero(np.concatenate(([True], thread[1:] != thread[:-1])))
        group_threads = thread[group_start].tolist()
        first_rows = order[group_start] + self.seen   # each group's earliest event
        carries = [self.threads.setdefault(t, ThreadCarry(first_event=int(first)))
                   for t, first in zip(group_threads, first_rows.tolist())]
        # Extended rows: one carry row in front of each thread's events.
        n, groups = len(order), len(group_start)
        carry_rows = group_start + np.arange(groups)
        is_carry = np.zeros(n + groups, dtype=bool)
        is_carry[carry_rows] = True
        real = ~is_carry
        group_of_row = np.cumsum(is_carry) - 1

        def extend(values: np.ndarray, carry_values: Iterable[float | int],
                   dtype: object) -> np.ndarray:
            """``values`` in the real rows, one carried value per thread in its carry row."""
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
