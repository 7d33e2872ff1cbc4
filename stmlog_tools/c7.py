"""PyPy's C7 counting rules: a plain per-event loop (C7 logs are old and small).

Per thread, a transaction's CPU time is stop - start - paused. A
contention event opens (or counts again) the conflict keyed by (event,
marker1, marker2) and attaches it to its thread as "local";
ABORTING_OTHER_CONTENTION hands it to the victim as "remote". An ABORT
charges the transaction's time to the attached conflict (plus the 1 us
stmgc slept after an abort); a WAIT..DONE charges the pause to a local one.
"""

from __future__ import annotations

from stmlog_tools.format import C7_EVENTS
from stmlog_tools.reader import EventChunk
from stmlog_tools.tallies import Conflict, Tally, ThreadTotals


class C7Analyser(Tally):
    """PyPy's C7 analyser: per-transaction CPU time and contention conflicts (a plain loop)."""

    PAUSE_AFTER_ABORT = 0.000001   # stmgc slept 1 us after every abort

    def __init__(self, markers: list[bytes]) -> None:
        super().__init__()
        self.markers = markers
        self.running: dict[int, dict] = {}   # per thread: the transaction in progress

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
        threads = self.running
        columns = (chunk.time.tolist(), chunk.thread.tolist(), chunk.other_thread.tolist(),
                   chunk.event.tolist(), chunk.marker.tolist(), chunk.marker2.tolist())
        for index, (time, thread, other, event, m1, m2) in enumerate(zip(*columns)):
            t = threads.get(thread)
            if event == start:
                if t is None:
                    t = threads[thread] = {"totals": ThreadTotals(first_event=self.seen + index),
                                           "conflict": None}
                    self.threads[thread] = t["totals"]
                t.update(start=time, conflict=None, pause=None, paused=0.0)
            elif event in contention:
                # Counted whatever the thread does; attached only to a running transaction.
                conflict = self._conflict(event, m1, m2, self.seen + index)
                conflict.count += 1
                conflict.times.append((time,))
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
                totals = t["totals"]
                totals.cpu_total += spent
                if event == commit:
                    totals.count_committed += 1
                else:
                    totals.count_aborted += 1
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
