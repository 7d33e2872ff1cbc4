"""Guess which C8 event numbering a log uses (``--events auto``).

The C8 header never changed while the event numbers did (final, 2015-06,
2015-03), so the file alone does not say. We decode the first events
(up to :data:`SAMPLE_EVENTS`) with each numbering and count what would be
impossible or odd under it:

* an event number outside the numbering (rules it out);
* a marker on an event that never carries one (only BECOME_INEVITABLE and
  CONTENTION_WRITE_READ do);
* a CONTENTION_WRITE_READ not followed on its thread by an ABORT;
* a WAIT_DONE with no wait open on its thread, or a wait closed by
  something else than WAIT_DONE or ABORT;
* a COMMIT or ABORT outside a transaction, or a START inside one;
* a GC "done" with no matching "start" open.

The numbering with the fewest oddities wins; ties go to the newest one
(final, then 2015-06, then 2015-03), as most logs in the wild are final.

The reader takes concrete numberings only; every caller turns
``--events`` into one with :func:`resolve_numbering`, which reads the
sample through the caller's open :class:`LogInput` and rewinds it (a
stream keeps the sample to replay it). Importing this module does not
import numpy (the C path of ``report`` imports it), only guessing does.
"""

from __future__ import annotations

import logging

from stmlog_tools.format import C8_FINAL, C8_TABLES, C8_NUMBERINGS
from stmlog_tools.logfile import LogInput

log = logging.getLogger(__name__)

#: How many events the guess looks at.
SAMPLE_EVENTS = 20000

_N = C8_FINAL.numbers
_MARKED = {_N["STM_BECOME_INEVITABLE"], _N["STM_CONTENTION_WRITE_READ"]}


def oddities(raw_events: list[int], threads: list[int], has_marker: list[bool],
             numbering: str) -> float:
    """How odd the sample looks when read with ``numbering`` (inf: impossible)."""
    table = C8_TABLES[numbering]
    if raw_events and max(raw_events) >= len(table):
        return float("inf")
    to_final = table.to_final()
    count = 0
    in_txn: dict[int, bool] = {}
    waiting: dict[int, bool] = {}
    expect_abort: dict[int, bool] = {}
    gc_open: dict[tuple[int, int], bool] = {}
    for raw, thread, marked in zip(raw_events, threads, has_marker):
        event = to_final[raw]
        if marked and event not in _MARKED:
            count += 1
        if expect_abort.pop(thread, False) and event != _N["STM_TRANSACTION_ABORT"]:
            count += 1
        if waiting.get(thread) and event not in (_N["STM_WAIT_DONE"],
                                                 _N["STM_TRANSACTION_ABORT"]):
            count += 1
            waiting[thread] = False
        if event == _N["STM_TRANSACTION_START"]:
            count += in_txn.get(thread, False)
            in_txn[thread] = True
        elif event in (_N["STM_TRANSACTION_COMMIT"], _N["STM_TRANSACTION_ABORT"]):
            count += not in_txn.get(thread, True)
            in_txn[thread] = False
            waiting[thread] = False
        elif event == _N["STM_CONTENTION_WRITE_READ"]:
            expect_abort[thread] = True
        elif event in (_N["STM_WAIT_FREE_SEGMENT"], _N["STM_WAIT_SYNCING"],
                       _N["STM_WAIT_SYNC_PAUSE"], _N["STM_WAIT_OTHER_INEVITABLE"]):
            waiting[thread] = True
        elif event == _N["STM_WAIT_DONE"]:
            count += not waiting.get(thread, False)
            waiting[thread] = False
        elif event in (_N["STM_GC_MINOR_START"], _N["STM_GC_MAJOR_START"]):
            gc_open[(thread, event)] = True
        elif event in (_N["STM_GC_MINOR_DONE"], _N["STM_GC_MAJOR_DONE"]):
            count += not gc_open.pop((thread, event - 1), False)
    return float(count)


def guess_numbering(source: LogInput) -> str:
    """The C8 numbering that makes the start of the log ``source`` look most plausible.

    Reads at most a chunk or two from the first record, then rewinds ``source``.
    """
    from stmlog_tools.reader import LogReader   # numpy: only when guessing

    source.keep()
    reader = LogReader(source, events="final")
    raw: list[int] = []
    threads: list[int] = []
    marked: list[bool] = []
    # The final numbering is the largest and reads every older number as itself.
    for chunk in reader.chunks():
        take = SAMPLE_EVENTS - len(raw)
        raw += chunk.event[:take].tolist()
        threads += chunk.thread[:take].tolist()
        marked += (chunk.marker[:take] != 0).tolist()
        if len(raw) >= SAMPLE_EVENTS:
            break
    source.rewind()
    scores = {name: oddities(raw, threads, marked, name) for name in C8_NUMBERINGS}
    best = min(C8_NUMBERINGS, key=lambda name: (scores[name], C8_NUMBERINGS.index(name)))
    log.info("event numbering guess for %s: %s (oddities per numbering: %s)", source.path,
             best, ", ".join(f"{k}={v:g}" for k, v in scores.items()))
    return best


def resolve_numbering(source: LogInput, events: str) -> str:
    """The concrete numbering to read ``source`` with: "c7" for a C7 log, the guess for
    ``events="auto"``, else ``events`` itself."""
    if source.format == "c7":
        return "c7"
    if events == "auto":
        return guess_numbering(source)
    if events not in C8_NUMBERINGS:
        raise ValueError(f"unknown C8 event numbering {events!r} "
                         f"(expected auto or one of {', '.join(C8_NUMBERINGS)})")
    return events


__all__ = ["guess_numbering", "oddities", "resolve_numbering", "SAMPLE_EVENTS"]
