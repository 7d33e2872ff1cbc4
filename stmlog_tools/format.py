"""The PYPYSTM binary log format: headers, record layouts and event tables.

This module holds the facts of the format and nothing else (the reader,
writer and analyser build on it). Two versions exist:

* C7 (header ``STMGC-C7-PROF01\\n``): 19-byte records
  ``<IIIIBBB`` = sec, nsec, thread_num, other_thread_num, event, len1,
  len2, then two markers of at most 127 bytes each.
* C8 (header ``STMGC-C8-PROF01\\n``): 14-byte records ``<IIIBB`` = sec,
  nsec, thread_num, event, marker_len, then one marker of at most 159
  bytes. The header never changed but the event numbering did, so a C8
  file is read with one of three numberings: ``final`` (November 2015
  on, the one our runtime writes), ``2015-06`` and ``2015-03``.

Every numbering is an :class:`EventTable`. Names are the ``STM_*`` names
PyPy used; the analyser works on the *final* C8 names whatever the file's
numbering, through :meth:`EventTable.to_final`.

Markers are text, ``File "<path>", line <n>, in <func>``;
:func:`make_marker` builds one and cuts it to fit the way stmgc did.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

HEADER_SIZE = 16
C7_HEADER = b"STMGC-C7-PROF01\n"
C8_HEADER = b"STMGC-C8-PROF01\n"

C7_RECORD = struct.Struct("<IIIIBBB")
C8_RECORD = struct.Struct("<IIIBB")
C7_MAX_MARKER = 127
C8_MAX_MARKER = 159

#: Names of the log formats, as the JSON report spells them.
FORMATS = ("c7", "c8")
#: Names of the C8 numberings accepted by ``--events`` (plus ``auto``).
C8_NUMBERINGS = ("final", "2015-06", "2015-03")


@dataclass(frozen=True)
class EventTable:
    """One event numbering: event number n is ``names[n]``."""

    label: str
    names: tuple[str, ...]
    numbers: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "numbers", {name: n for n, name in enumerate(self.names)})

    def __len__(self) -> int:
        return len(self.names)

    def number(self, event: int | str) -> int:
        """The number of ``event``, given as a number or a name (``STM_`` optional)."""
        if isinstance(event, str):
            name = event if event.startswith("STM_") else "STM_" + event
            try:
                return self.numbers[name]
            except KeyError:
                raise ValueError(f"no event {event!r} in the {self.label} numbering") from None
        if not 0 <= event < len(self.names):
            raise ValueError(f"event number {event} is outside the {self.label} numbering "
                             f"(0..{len(self.names) - 1})")
        return event

    def to_final(self) -> list[int]:
        """For each number of this table, the number of the same event in C8 final."""
        return [C8_FINAL.numbers[name] for name in self.names]


_GC = ("STM_GC_MINOR_START", "STM_GC_MINOR_DONE", "STM_GC_MAJOR_START", "STM_GC_MAJOR_DONE")

C7_EVENTS = EventTable("c7", (
    "STM_TRANSACTION_START", "STM_TRANSACTION_COMMIT", "STM_TRANSACTION_ABORT",
    "STM_CONTENTION_WRITE_WRITE", "STM_CONTENTION_WRITE_READ", "STM_CONTENTION_INEVITABLE",
    "STM_ABORTING_OTHER_CONTENTION",
    "STM_WAIT_FREE_SEGMENT", "STM_WAIT_SYNC_PAUSE", "STM_WAIT_CONTENTION", "STM_WAIT_DONE",
) + _GC)

C8_FINAL = EventTable("final", (
    "STM_TRANSACTION_START", "STM_TRANSACTION_COMMIT", "STM_TRANSACTION_ABORT",
    "STM_TRANSACTION_DETACH", "STM_TRANSACTION_REATTACH",
    "STM_BECOME_INEVITABLE", "STM_CONTENTION_WRITE_READ",
    "STM_WAIT_FREE_SEGMENT", "STM_WAIT_SYNCING", "STM_WAIT_SYNC_PAUSE",
    "STM_WAIT_OTHER_INEVITABLE", "STM_WAIT_DONE",
) + _GC)

C8_2015_06 = EventTable("2015-06", (
    "STM_TRANSACTION_START", "STM_TRANSACTION_COMMIT", "STM_TRANSACTION_ABORT",
    "STM_BECOME_INEVITABLE", "STM_CONTENTION_WRITE_READ",
    "STM_WAIT_FREE_SEGMENT", "STM_WAIT_SYNCING", "STM_WAIT_SYNC_PAUSE",
    "STM_WAIT_OTHER_INEVITABLE", "STM_WAIT_DONE",
) + _GC)

C8_2015_03 = EventTable("2015-03", (
    "STM_TRANSACTION_START", "STM_TRANSACTION_COMMIT", "STM_TRANSACTION_ABORT",
    "STM_CONTENTION_WRITE_READ", "STM_BECOME_INEVITABLE",
    "STM_WAIT_FREE_SEGMENT", "STM_WAIT_SYNC_PAUSE",
    "STM_WAIT_OTHER_INEVITABLE", "STM_WAIT_DONE",
) + _GC)

C8_TABLES = {table.label: table for table in (C8_FINAL, C8_2015_06, C8_2015_03)}

# The final C8 numbering by name, for code that writes our runtime's logs.
STM_TRANSACTION_START = 0
STM_TRANSACTION_COMMIT = 1
STM_TRANSACTION_ABORT = 2
STM_TRANSACTION_DETACH = 3
STM_TRANSACTION_REATTACH = 4
STM_BECOME_INEVITABLE = 5
STM_CONTENTION_WRITE_READ = 6
STM_WAIT_FREE_SEGMENT = 7
STM_WAIT_SYNCING = 8
STM_WAIT_SYNC_PAUSE = 9
STM_WAIT_OTHER_INEVITABLE = 10
STM_WAIT_DONE = 11
STM_GC_MINOR_START = 12
STM_GC_MINOR_DONE = 13
STM_GC_MAJOR_START = 14
STM_GC_MAJOR_DONE = 15
assert all(globals()[name] == n for n, name in enumerate(C8_FINAL.names))


def table_for(fmt: str, events: str = "final") -> EventTable:
    """The event table of format ``fmt`` ("c7"/"c8") with C8 numbering ``events``."""
    if fmt == "c7":
        return C7_EVENTS
    if fmt != "c8":
        raise ValueError(f"unknown log format {fmt!r} (expected one of {', '.join(FORMATS)})")
    try:
        return C8_TABLES[events]
    except KeyError:
        raise ValueError(f"unknown C8 event numbering {events!r} "
                         f"(expected one of {', '.join(C8_NUMBERINGS)})") from None


def make_marker(filename: str | None, line: int | None, function: str | None,
                max_len: int = C8_MAX_MARKER) -> bytes:
    """A marker ``File "<path>", line <n>, in <func>`` that fits in ``max_len`` bytes.

    Missing values give ``?`` and line 0. When too long, the function
    name is cut first (ending with ``>``), then the file name keeps its
    tail (starting with ``<``), as stmgc did, so the line number survives.
    """
    path = (filename or "?").encode("utf-8", "replace")
    func = (function or "?").encode("utf-8", "replace")
    number = int(line or 0)

    def build(p: bytes, f: bytes) -> bytes:
        return b'File "%s", line %d, in %s' % (p, number, f)

    excess = len(build(path, func)) - max_len
    if excess > 0 and len(func) > 8:
        keep = max(8, len(func) - excess - 1)
        func = func[:keep] + b">"
        excess = len(build(path, func)) - max_len
    if excess > 0 and len(path) > 8:
        keep = max(8, len(path) - excess - 1)
        path = b"<" + path[len(path) - keep:]
    return build(path, func)[:max_len]
