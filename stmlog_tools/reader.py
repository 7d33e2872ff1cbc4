"""Stream PYPYSTM logs (C7 and C8) in chunks of numpy arrays, with clear errors.

Interface (stable, others rely on it)::

    from stmlog_tools.reader import LogReader, LogError
    reader = LogReader("run.log", events="final")   # or "2015-06", "2015-03"
    for chunk in reader.chunks():       # EventChunk: parallel numpy arrays
        chunk.time, chunk.thread, chunk.event, chunk.marker, chunk.offset
    for event in reader.events():       # Event namedtuples, one per record
        ...
    reader.markers[i]                   # marker bytes by id (id 0 is b"")

The first argument is a path (``-``: stdin) or a :class:`LogInput` that
the caller opened (:func:`stmlog_tools.logfile.open_log`, which checks the
header once per command). ``events`` is a concrete numbering: callers
resolve "auto" with :func:`stmlog_tools.guess.resolve_numbering` first.
``chunk.event`` is always in the *final* C8 numbering for C8 files (the
file's own numbering is translated), and in the C7 numbering for C7 files.
``reader.format`` is "c7" or "c8", ``reader.numbering`` the numbering used.
Each call of :meth:`LogReader.chunks` reads from the first record again
(a stream only when :meth:`LogInput.keep` was called before the first).

Memory stays flat: the log is read ``chunk_size`` bytes at a time and
each chunk is parsed with numpy, so a chunk's events live only while the
caller looks at them. Records have variable length (a fixed header, then
markers), so record boundaries form a chain that is sequential by nature;
:func:`record_starts` finds it without a Python loop per record (see its
docstring). Marker ids are interned across chunks.

Problems raise :class:`LogError` (file, byte offset, problem; ``str()`` is
the one-line message the CLI prints). A truncated last record is not an
error: it is dropped, logged as a warning and kept in ``reader.warnings``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from stmlog_tools.format import (
    C7_EVENTS, C7_MAX_MARKER, C8_FINAL, C8_MAX_MARKER, C8_NUMBERINGS, EventTable, table_for,
)
from stmlog_tools.logfile import (  # noqa: F401  (LogError and ProgressCallback re-exported)
    LogError, LogInput, ProgressCallback, decreasing_time_problem, empty_log_error,
    long_marker_problem, open_log, truncated_warning, unknown_event_problem,
)

log = logging.getLogger(__name__)

#: Bytes read per chunk. Big enough for numpy to pay off, small enough to stay flat.
DEFAULT_CHUNK_SIZE = 4 << 20



class EventChunk(NamedTuple):
    """Consecutive records as parallel arrays (C7-only fields are zero for C8)."""

    offset: np.ndarray        # int64 byte offset of each record in the file
    time: np.ndarray          # float64 seconds, sec + 1e-9 * nsec as PyPy computed it
    thread: np.ndarray        # uint32 thread_num
    event: np.ndarray         # uint8 event number (final numbering for C8)
    marker: np.ndarray        # int32 marker id (0 = no marker)
    other_thread: np.ndarray  # uint32 (C7 only)
    marker2: np.ndarray       # int32 second marker id (C7 only)

    def __len__(self) -> int:
        return len(self.offset)


class Event(NamedTuple):
    """One record, for code that wants objects rather than arrays (e.g. ``dump``)."""

    offset: int
    time: float
    thread: int
    name: str
    marker: bytes
    other_thread: int = 0
    marker2: bytes = b""


@dataclass(frozen=True)
class _Layout:
    """Where the fields of one format's fixed-size record header sit."""

    size: int                     # fixed part of a record
    length_fields: tuple[int, ...]  # offsets of the marker-length bytes
    event_field: int
    max_marker: int
    dtype: np.dtype
    # Bytes that are zero in every plausible header (high bytes of thread
    # numbers); only used to pick likely record starts, never to decide.
    zero_fields: tuple[int, ...]


C8_LAYOUT = _Layout(14, (13,), 12, C8_MAX_MARKER,
                    np.dtype([("sec", "<u4"), ("nsec", "<u4"), ("thread", "<u4"),
                              ("event", "u1"), ("len1", "u1")]), (10, 11))
C7_LAYOUT = _Layout(19, (17, 18), 16, C7_MAX_MARKER,
                    np.dtype([("sec", "<u4"), ("nsec", "<u4"), ("thread", "<u4"),
                              ("other", "<u4"), ("event", "u1"), ("len1", "u1"),
                              ("len2", "u1")]), (10, 11, 14, 15))
LAYOUTS = {"c7": C7_LAYOUT, "c8": C8_LAYOUT}

#: Longest chain a walker follows in one pass of :func:`record_starts`.
_MAX_WALK = 256


def _record_ends(buf: np.ndarray, positions: np.ndarray, layout: _Layout) -> np.ndarray:
    """Where the record would end if one started at each of ``positions`` (all <= last)."""
    ends = positions + layout.size
    for field in layout.length_fields:
        ends += buf[positions + field]
    return ends


def _u32_view(buf: np.ndarray) -> np.ndarray:
    """A view where element i is the little-endian uint32 at byte i (unaligned reads)."""
    return np.ndarray(shape=(max(len(buf) - 3, 0),), dtype="<u4", buffer=buf, strides=(1,))


def _seed_positions(buf: np.ndarray, layout: _Layout, n_events: int, last: int,
                    ordered: bool) -> np.ndarray:
    """Positions that very probably start a record: the seeds of the chain walk.

    A candidate has a plausible header (zero high bytes in thread numbers,
    known event number, marker lengths within the limit, nsec < 1e9), and so
    do the next two records its lengths point to, with times that do not
    decrease when the format is ``ordered`` (C8). Random positions rarely
    pass all that. Wrong guesses cost only speed: :func:`record_starts`
    trusts a seed only once the chain from the start reaches it.
    """
    n = len(buf)
    zero = buf == 0
    first_zero, *other_zeros = layout.zero_fields
    ok = zero[first_zero:first_zero + last + 1].copy()
    for field in other_zeros:
        ok &= zero[field:field + last + 1]
    cand = np.flatnonzero(ok)
    words = _u32_view(buf)
    plausible = (buf[cand + layout.event_field] < n_events) & (words[cand + 4] < 1_000_000_000)
    for field in layout.length_fields:
        plausible &= buf[cand + field] <= layout.max_marker
    cand = cand[plausible]
    after = _record_ends(buf, cand, layout)
    follower = np.minimum(np.searchsorted(cand, after), max(len(cand) - 1, 0))
    beyond = after >= n   # the chunk ends there: nothing to check against
    has_follower = ~beyond & (cand[follower] == after) if len(cand) else beyond
    step_ok = beyond | has_follower
    if ordered and len(cand):
        times = words[cand].astype(np.uint64) * np.uint64(1_000_000_000) + words[cand + 4]
        step_ok &= ~has_follower | (times[follower] >= times)
    two_ok = step_ok & np.where(has_follower, step_ok[follower], True)
    return cand[two_ok]


def record_starts(buf: np.ndarray, first: int, layout: _Layout, n_events: int,
                  ordered: bool = True) -> tuple[np.ndarray, int]:
    """Start offsets of the complete records chained from ``first``, and where the chain stops.

    The stop is ``len(buf)`` when the last record ends exactly at the end,
    else the start of the incomplete record there (the caller carries it to
    the next chunk).

    Each record's length is in its own header, so the true starts are the
    chain first, next(first), ... with next(p) = p + size + marker lengths:
    sequential by nature. Rather than follow it record by record in Python,
    we pick "seed" positions that very probably start records and follow the
    chains from all seeds at once, one numpy step per record, each until it
    reaches another seed (usually after one step). The chain from ``first``
    is then read off the seed-to-seed links, vectorised except at the rare
    links that skip seeds. A seed counts only when the chain from ``first``
    reaches it, so the result is exact whatever the seeds; bad seeds cost
    time only (a walk that runs too long is cut and restarted from where
    the true chain got to).
    """
    n = len(buf)
    last = n - layout.size
    if first > last:
        return np.empty(0, dtype=np.int64), first
    seeds = _seed_positions(buf, layout, n_events, last, ordered)
    is_seed = np.zeros(n + 1, dtype=bool)
    is_seed[seeds] = True
    is_seed[n] = True
    pieces: list[np.ndarray] = []
    while True:
        is_seed[first] = True
        origins = np.concatenate(([first], seeds[seeds > first])).astype(np.int64)
        starts, stop, cut = _walk(origins, is_seed, buf, layout, n, last)
        pieces.append(starts)
        if cut:
            # No seed ahead on the true chain for a while (headers the seed test
            # does not expect): step record by record up to the next seed.
            starts, stop, cut = _step_to_seed(stop, is_seed, buf, layout, n, last)
            pieces.append(starts)
        if not cut:
            return (np.concatenate(pieces) if len(pieces) > 1 else pieces[0]), stop
        first = stop


def _step_to_seed(first: int, is_seed: np.ndarray, buf: np.ndarray, layout: _Layout, n: int,
                  last: int) -> tuple[np.ndarray, int, bool]:
    """Follow the chain in plain Python from ``first`` to the next seed or the end.

    Returns (starts, stop, whether a seed was reached, so the walk can go on).
    """
    data = buf.data   # a memoryview: indexing it gives ints, quickly
    starts = []
    pos = first
    while pos <= last:
        end = pos + layout.size + sum(data[pos + field] for field in layout.length_fields)
        if end > n:
            break
        starts.append(pos)
        pos = end
        if pos == n or is_seed[pos]:
            return np.array(starts, dtype=np.int64), pos, pos < n
    return np.array(starts, dtype=np.int64), pos, False


def _walk(origins: np.ndarray, is_seed: np.ndarray, buf: np.ndarray, layout: _Layout,
          n: int, last: int) -> tuple[np.ndarray, int, bool]:
    """One lock-step walk (see :func:`record_starts`): (starts, stop, was the true chain cut)."""
    count = len(origins)
    # Walker i's chain reaches position reach[i]: a seed (-> link), the end, or a cut.
    reach = np.full(count, -1, dtype=np.int64)
    ends_here = np.zeros(count, dtype=bool)   # chain stops: end of data or incomplete record
    walkers = np.arange(count)
    cursor = origins
    visited_walker: list[np.ndarray] = []
    visited_pos: list[np.ndarray] = []
    for _ in range(_MAX_WALK):
        if len(walkers) == 0:
            break
        fits = cursor <= last
        if not fits.all():
            stopped = ~fits
            ends_here[walkers[stopped]] = True
            reach[walkers[stopped]] = cursor[stopped]
            walkers, cursor = walkers[fits], cursor[fits]
        after = _record_ends(buf, cursor, layout)
        complete = after <= n
        if not complete.all():
            stopped = ~complete
            ends_here[walkers[stopped]] = True
            reach[walkers[stopped]] = cursor[stopped]
            walkers, cursor, after = walkers[complete], cursor[complete], after[complete]
        visited_walker.append(walkers)
        visited_pos.append(cursor)
        arrived = is_seed[after]
        reach[walkers[arrived]] = after[arrived]
        walkers, cursor = walkers[~arrived], after[~arrived]
    reach[walkers] = cursor          # cut walkers: where they got to
    cut = np.zeros(count, dtype=bool)
    cut[walkers] = True
    ends_here |= reach == n
    on_chain, tail = _chain_from_first(origins, reach, ends_here | cut)
    all_walkers = np.concatenate(visited_walker)
    all_pos = np.concatenate(visited_pos)
    starts = all_pos[on_chain[all_walkers]]
    if len(visited_pos) > 1:
        starts = np.sort(starts)
    return starts, int(reach[tail]), bool(cut[tail])


def _chain_from_first(origins: np.ndarray, reach: np.ndarray,
                      terminal: np.ndarray) -> tuple[np.ndarray, int]:
    """Which walkers lie on the chain from walker 0, and the walker where it stops.

    Walker i links to the walker starting at reach[i]. Mostly that is walker
    i + 1, so the chain is followed range by range, in Python only at the
    links that skip (false seeds) or end.
    """
    count = len(origins)
    link = np.searchsorted(origins, reach)
    link_ok = ~terminal & (link < count)
    regular = link_ok & (link == np.arange(count) + 1)
    irregular = np.flatnonzero(~regular)          # always includes the final stop
    marks = np.zeros(count + 1, dtype=np.int64)
    i = 0
    while True:
        k = int(irregular[np.searchsorted(irregular, i)])
        marks[i] += 1
        marks[k + 1] -= 1
        if not link_ok[k]:
            return np.cumsum(marks[:-1]) > 0, k
        i = int(link[k])


class LogReader:
    """A PYPYSTM log opened for streaming; see the module docstring."""

    def __init__(self, source: str | os.PathLike[str] | LogInput, events: str = "final",
                 chunk_size: int = DEFAULT_CHUNK_SIZE,
                 progress: ProgressCallback | None = None) -> None:
        self.source = source if isinstance(source, LogInput) else open_log(os.fspath(source))
        self.path = self.source.path
        self.chunk_size = max(int(chunk_size), 64)
        self.progress = progress
        self.warnings: list[str] = []
        self.markers: list[bytes] = [b""]
        self._marker_ids: dict[bytes, int] = {b"": 0}
        self.format = self.source.format
        self.size = self.source.size
        self.layout = LAYOUTS[self.format]
        if self.format == "c7":
            self.numbering = "c7"
        elif events in C8_NUMBERINGS:
            self.numbering = events
        else:
            raise ValueError(f"events={events!r}: the reader takes a concrete C8 numbering "
                             f"({', '.join(C8_NUMBERINGS)}); resolve 'auto' with "
                             f"stmlog_tools.guess.resolve_numbering")
        self.table: EventTable = table_for(self.format, self.numbering)
        self.event_names = C7_EVENTS.names if self.format == "c7" else C8_FINAL.names
        self._translate = np.array(self.table.to_final() if self.format == "c8"
                                   else range(len(C7_EVENTS)), dtype=np.uint8)

    def _error(self, offset: int | None, problem: str) -> LogError:
        return LogError(self.path, offset, problem)

    def chunks(self) -> Iterator[EventChunk]:
        """The log's records from the first, chunk by chunk; raises LogError on damage."""
        layout = self.layout
        n_events = len(self.table)
        last_time = -1.0
        carry = b""
        source = self.source
        source.rewind()
        base = source.position   # log offset of carry[0]
        produced = False
        while True:
            block = source.read(self.chunk_size)
            at_eof = len(block) < self.chunk_size
            data = carry + block if carry else block
            buf = np.frombuffer(data, dtype=np.uint8)
            starts, stop = record_starts(buf, 0, layout, n_events, ordered=self.format == "c8")
            if len(starts):
                chunk = self._decode(data, buf, starts, base, n_events, last_time)
                last_time = float(chunk.time[-1])
                produced = True
                yield chunk
            carry = data[stop:]
            base += stop
            if self.progress is not None:
                self.progress(base if self.size is None else min(base, self.size),
                              self.size or 0)
            if at_eof:
                break
        if not produced:
            raise empty_log_error(self.path, len(carry))
        if carry:
            message = truncated_warning(self.path, base, len(carry))
            self.warnings.append(message)
            log.warning("%s", message)

    def _decode(self, data: bytes, buf: np.ndarray, starts: np.ndarray, base: int,
                n_events: int, last_time: float) -> EventChunk:
        """The records at ``starts`` as arrays; raises LogError at the first damaged one."""
        layout = self.layout
        fields = self._header_fields(buf, starts)
        raw_event = fields["event"]
        time = fields["sec"].astype(np.float64) + 0.000000001 * fields["nsec"].astype(np.float64)
        problems: list[tuple[int, str]] = []
        bad = np.flatnonzero(raw_event >= n_events)
        if len(bad):
            i = int(bad[0])
            problems.append((i, unknown_event_problem(int(raw_event[i]), self.numbering,
                                                      n_events)))
        for name in ("len1", "len2") if self.format == "c7" else ("len1",):
            too_long = np.flatnonzero(fields[name] > layout.max_marker)
            if len(too_long):
                i = int(too_long[0])
                problems.append((i, long_marker_problem(int(fields[name][i]), layout.max_marker)))
        if self.format == "c8":   # written under a lock: time never goes back
            previous = np.empty_like(time)
            previous[0] = last_time
            previous[1:] = time[:-1]
            back = np.flatnonzero(time < previous)
            if len(back):
                i = int(back[0])
                problems.append((i, decreasing_time_problem(float(time[i]), float(previous[i]))))
        if problems:
            i, problem = min(problems)
            raise self._error(base + int(starts[i]), problem)
        marker = self._intern(data, starts + layout.size, fields["len1"])
        zeros = np.zeros(len(starts), dtype=np.uint32)
        if self.format == "c7":
            other = fields["other"]
            marker2 = self._intern(data, starts + layout.size + fields["len1"], fields["len2"])
        else:
            other, marker2 = zeros, np.zeros(len(starts), dtype=np.int32)
        return EventChunk(offset=starts + base, time=time,
                          thread=fields["thread"],
                          event=self._translate[raw_event], marker=marker,
                          other_thread=other, marker2=marker2)

    def _header_fields(self, buf: np.ndarray, starts: np.ndarray) -> dict[str, np.ndarray]:
        """The fixed-size header fields of the records at ``starts``, one array each."""
        words = _u32_view(buf)
        layout = self.layout
        fields = {name: words[starts + layout.dtype.fields[name][1]]
                  for name in ("sec", "nsec", "thread", "other") if name in layout.dtype.fields}
        for name in ("event", "len1", "len2"):
            if name in layout.dtype.fields:
                fields[name] = buf[starts + layout.dtype.fields[name][1]]
        return fields

    def _intern(self, data: bytes, positions: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Marker ids for markers at ``positions`` of ``data`` (0 where the length is 0)."""
        ids = np.zeros(len(positions), dtype=np.int32)
        marked = np.flatnonzero(lengths)
        if len(marked) == 0:
            return ids
        known = self._marker_ids
        table = self.markers
        found = []
        for pos, length in zip(positions[marked].tolist(), lengths[marked].tolist()):
            text = data[pos:pos + length]
            marker_id = known.get(text)
            if marker_id is None:
                marker_id = known[text] = len(table)
                table.append(text)
            found.append(marker_id)
        ids[marked] = found
        return ids

    def events(self) -> Iterator[Event]:
        """The log's records one by one, as :class:`Event` tuples."""
        names = self.event_names
        markers = self.markers
        for chunk in self.chunks():
            columns = (chunk.offset.tolist(), chunk.time.tolist(), chunk.thread.tolist(),
                       chunk.event.tolist(), chunk.marker.tolist(),
                       chunk.other_thread.tolist(), chunk.marker2.tolist())
            for offset, time, thread, event, m1, other, m2 in zip(*columns):
                yield Event(offset, time, thread, names[event], markers[m1], other, markers[m2])
