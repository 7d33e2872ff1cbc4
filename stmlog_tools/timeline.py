"""Draw a PYPYSTM log: one lane per thread (SVG or HTML), or a Chrome trace-event JSON file.

Each lane shows, for every pixel column, how that slice of time was spent
on the thread: running a transaction that later committed, one that later
aborted, running inevitably, or paused (waiting). Ticks above a lane mark
conflicts: contentions (write-read in C8) and waits for another
inevitable transaction. Hovering a column shows its figures.

What is drawn is a window of the log: by default from the first
transaction start to the last transaction end (idle time at both ends is
cropped), or what ``window`` says (seconds after the log's first event,
which is also the zero of the axis). However long the log, the picture has
a fixed number of columns: the log is read twice (first for its time span
and activity, then to add each interval to the columns it overlaps), so
memory stays flat; a stream is spooled for the second pass. The axis has
ticks at round values (1, 2 or 5 times a power of ten) in s, ms, us or ns.
The HTML page lets you drag across the lanes to zoom: it prints the
``--from``/``--to`` of the range, which re-draws it at full resolution.

:func:`write_trace` writes the same intervals in the Chrome trace-event
format (the JSON that Perfetto and chrome://tracing open), in one pass:
one slice per transaction (named by its outcome) on its thread, with
"inevitable" and "paused" slices nested inside, and instant events for
contentions and inevitable waits.

C8 logs only use final-numbering events; C7 logs draw transactions and
pauses (C7 has no inevitable event).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Protocol

import numpy as np

from stmlog_tools.format import C7_EVENTS, C8_FINAL
from stmlog_tools.logfile import LogInput
from stmlog_tools.reader import EventChunk, LogReader, ProgressCallback

#: Categories of time, in drawing order (bottom to top of a lane), with colours.
CATEGORIES = (("committed", "#3a9a4a"), ("inevitable", "#3366cc"),
              ("aborted", "#d03030"), ("paused", "#b0b0b0"))
CONFLICT_COLOURS = {"contention": "#a00000", "inevitable_wait": "#e08000"}

#: Columns of the time axis by default (the CLI accepts 1 to cli.MAX_WIDTH).
DEFAULT_COLUMNS = 1000

LANE_HEIGHT = 28
LANE_GAP = 14
LEFT = 90
TOP = 40


class Sink(Protocol):
    """What :class:`LaneMachine` reports, in log time (seconds)."""

    def interval(self, thread: int, category: str, begin: float, end: float) -> None: ...

    def transaction(self, thread: int, outcome: str, begin: float, end: float) -> None: ...

    def mark(self, thread: int, kind: str, time: float, marker: bytes) -> None: ...


@dataclass
class _LaneState:
    """The transaction a thread is in the middle of."""

    txn_start: float | None = None
    state_since: float = 0.0
    state: str = "stop"               # stop | run | inevitable | paused
    resume: str = "run"               # the state a WAIT_DONE returns to
    pending: list[tuple[str, float, float]] = field(default_factory=list)


def _short(name: str) -> str:
    return name[4:] if name.startswith("STM_") else name


def _action(name: str) -> str | None:
    """What an event (``STM_`` name) does to its thread's lane."""
    n = _short(name)
    return {"TRANSACTION_START": "start", "TRANSACTION_COMMIT": "commit",
            "TRANSACTION_ABORT": "abort", "BECOME_INEVITABLE": "inevitable",
            "TRANSACTION_REATTACH": "inevitable", "WAIT_OTHER_INEVITABLE": "wait_inevitable",
            "WAIT_DONE": "resume"}.get(n) or ("wait" if n.startswith("WAIT_") else
                                              "contention" if n.startswith("CONTENTION_")
                                              else None)


class LaneMachine:
    """Turns events into per-thread intervals of each category, reported to a sink.

    A transaction's intervals are reported when it ends, once its outcome
    is known (running time is "aborted" time if it aborts).
    """

    def __init__(self, fmt: str, markers: list[bytes], sink: Sink) -> None:
        self.sink = sink
        self.markers = markers
        self.lanes: dict[int, _LaneState] = {}
        names = C7_EVENTS.names if fmt == "c7" else C8_FINAL.names
        self.actions = [_action(n) for n in names]

    def feed(self, chunk: EventChunk) -> None:
        sink, markers, actions = self.sink, self.markers, self.actions
        for now, thread, event, marker in zip(chunk.time.tolist(), chunk.thread.tolist(),
                                              chunk.event.tolist(), chunk.marker.tolist()):
            what = actions[event]
            if what is None:
                continue
            lane = self.lanes.get(thread)
            if lane is None:
                lane = self.lanes[thread] = _LaneState()
            if what == "start":
                lane.pending.clear()
                lane.txn_start = now
                lane.state, lane.state_since, lane.resume = "run", now, "run"
            elif what == "commit" or what == "abort":
                self._finish(thread, lane, "committed" if what == "commit" else "aborted", now)
            elif what == "inevitable":
                self._enter(lane, "inevitable", now)
                lane.resume = "inevitable"
            elif what == "resume":
                self._enter(lane, lane.resume, now)
            elif what == "contention":
                sink.mark(thread, "contention", now, markers[marker])
            else:   # a wait
                self._enter(lane, "paused", now)
                if what == "wait_inevitable":
                    sink.mark(thread, "inevitable_wait", now, markers[marker])

    def close(self, end: float) -> None:
        """End of the log: transactions still running are drawn as committed up to ``end``."""
        for thread, lane in self.lanes.items():
            if lane.txn_start is not None:
                self._finish(thread, lane, "committed", end)

    @staticmethod
    def _enter(lane: _LaneState, state: str, now: float) -> None:
        if lane.state in ("run", "inevitable", "paused") and lane.txn_start is not None:
            lane.pending.append((lane.state, lane.state_since, now))
        lane.state, lane.state_since = state, now

    def _finish(self, thread: int, lane: _LaneState, outcome: str, now: float) -> None:
        self._enter(lane, "stop", now)
        for state, begin, stop in lane.pending:
            if state == "paused":
                category = "paused"
            elif outcome == "aborted":
                category = "aborted"
            else:
                category = "inevitable" if state == "inevitable" else "committed"
            self.sink.interval(thread, category, begin, stop)
        if lane.txn_start is not None:
            self.sink.transaction(thread, outcome, lane.txn_start, now)
        lane.pending.clear()
        lane.txn_start = None


@dataclass
class Activity:
    """What the first pass learns: the log's span and its busy part (transactions)."""

    first: float
    last: float
    busy_first: float | None = None   # the first transaction start
    busy_last: float | None = None    # the last transaction end (``last`` if one is open)


def activity(reader: LogReader) -> Activity:
    """One pass over the log: its time span and where transactions begin and end."""
    numbers = {_short(n): i for i, n in enumerate(reader.event_names)}
    start, ends = numbers["TRANSACTION_START"], (numbers["TRANSACTION_COMMIT"],
                                                 numbers["TRANSACTION_ABORT"])
    found: Activity | None = None
    open_txn: dict[int, bool] = {}
    for chunk in reader.chunks():
        if found is None:
            found = Activity(float(chunk.time[0]), float(chunk.time[0]))
        found.last = float(chunk.time[-1])
        starting = chunk.event == start
        ending = np.isin(chunk.event, ends)
        if found.busy_first is None and starting.any():
            found.busy_first = float(chunk.time[starting][0])
        if ending.any():
            found.busy_last = float(chunk.time[ending][-1])
        moves = np.flatnonzero(starting | ending)
        if len(moves):   # each thread's last start or end in the chunk says if it is open
            threads = chunk.thread[moves][::-1]
            _, last_index = np.unique(threads, return_index=True)
            for i in last_index.tolist():
                open_txn[int(threads[i])] = bool(starting[moves[::-1][i]])
    assert found is not None   # chunks() raises on an empty log
    if any(open_txn.values()):
        found.busy_last = found.last
    return found


def choose_window(act: Activity, crop: bool = True, begin: float | None = None,
                  end: float | None = None) -> tuple[float, float]:
    """The drawn window in log time. ``begin``/``end``: seconds after the first event."""
    lo, hi = act.first, act.last
    if crop and act.busy_first is not None:
        lo = act.busy_first
        hi = act.busy_last if act.busy_last is not None and act.busy_last > lo else act.last
    if begin is not None:
        if act.first + begin >= act.last and act.last > act.first:
            raise ValueError(f"{format_seconds(begin)} is at or after the end of the log "
                             f"({format_seconds(act.last - act.first)})")
        lo = act.first + begin
    if end is not None:
        hi = act.first + end
    if hi <= lo:
        hi = lo + 1e-9   # a single instant (or a cropped window ending where --from starts)
    return lo, hi


class _Binner:
    """Adds time intervals to fixed-width columns spanning [start, end] (clipped to it).

    Intervals are buffered and added a chunk at a time, vectorised: the time
    an interval set covers left of x is sum(max(0, x - begin)) - sum(max(0,
    x - end)), evaluated at every column edge with sorted prefix sums; the
    differences between edges clip intervals to the window by themselves.
    """

    def __init__(self, start: float, end: float, columns: int) -> None:
        self.start = start
        self.columns = columns
        self.width = max(end - start, 1e-9) / columns
        self.edges = self.width * np.arange(columns + 1)   # relative to start
        self._buffered: dict[tuple[int, int], tuple[np.ndarray, list[float], list[float]]] = {}

    def add(self, into: np.ndarray, row: int, begin: float, end: float) -> None:
        """Buffer the interval [begin, end) for row ``row`` of the 2-D array ``into``."""
        if end > begin:
            entry = self._buffered.setdefault((id(into), row), (into, [], []))
            entry[1].append(begin)
            entry[2].append(end)

    def flush(self) -> None:
        """Add the buffered intervals to their columns."""
        for (_, row), (into, begins, ends) in self._buffered.items():
            into[row] += np.diff(self._covered(begins) - self._covered(ends))
        self._buffered.clear()

    def _covered(self, points: list[float]) -> np.ndarray:
        """sum(max(0, edge - p) for p in points), for every column edge."""
        relative = np.sort(np.array(points) - self.start)
        count = np.searchsorted(relative, self.edges, side="right")
        prefix = np.concatenate(([0.0], np.cumsum(relative)))
        return count * self.edges - prefix[count]

    def column(self, t: float) -> int | None:
        """The column holding time ``t``, or None outside the window."""
        index = math.floor((t - self.start) / self.width)
        if index == self.columns and t - self.start <= self.width * self.columns:
            return index - 1   # the window's very end
        return index if 0 <= index < self.columns else None


@dataclass
class Lane:
    """One thread's columns: seconds per category, and conflict counts."""

    time: np.ndarray                  # (categories, columns)
    conflicts: dict[str, np.ndarray]  # kind -> count per column


class _ColumnSink:
    """A :class:`Sink` that adds intervals and marks to each thread's columns."""

    def __init__(self, binner: _Binner) -> None:
        self.binner = binner
        self.lanes: dict[int, Lane] = {}
        self.rows = {name: i for i, (name, _) in enumerate(CATEGORIES)}

    def lane(self, thread: int) -> Lane:
        lane = self.lanes.get(thread)
        if lane is None:
            columns = self.binner.columns
            lane = self.lanes[thread] = Lane(np.zeros((len(CATEGORIES), columns)),
                                             {kind: np.zeros(columns, dtype=np.int64)
                                              for kind in CONFLICT_COLOURS})
        return lane

    def interval(self, thread: int, category: str, begin: float, end: float) -> None:
        self.binner.add(self.lane(thread).time, self.rows[category], begin, end)

    def transaction(self, thread: int, outcome: str, begin: float, end: float) -> None:
        self.lane(thread)   # a lane even when the transaction is outside the window

    def mark(self, thread: int, kind: str, time: float, marker: bytes) -> None:
        column = self.binner.column(time)
        lane = self.lane(thread)
        if column is not None:
            lane.conflicts[kind][column] += 1


@dataclass
class Picture:
    """What :func:`render_svg` draws."""

    lanes: dict[int, Lane]
    origin: float      # the log's first event: zero on the axis
    start: float       # the window, in log time
    end: float
    title: str
    log_end: float = 0.0


def collect(source: str | LogInput, events: str = "final", columns: int = DEFAULT_COLUMNS,
            progress: ProgressCallback | None = None, crop: bool = True,
            begin: float | None = None, end: float | None = None) -> Picture:
    """Per-thread lanes of column figures over the chosen window of the log ``source``.

    ``events`` is a concrete numbering (see :mod:`stmlog_tools.guess`).
    Raises ValueError when ``begin`` lies beyond the log.
    """
    reader = LogReader(source, events=events, progress=progress)
    reader.source.keep()   # two passes: a stream is spooled
    act = activity(reader)
    start, stop = choose_window(act, crop, begin, end)
    binner = _Binner(start, stop, columns)
    sink = _ColumnSink(binner)
    machine = LaneMachine(reader.format, reader.markers, sink)
    for chunk in reader.chunks():   # second pass over the log: the columns
        machine.feed(chunk)
        binner.flush()
    machine.close(act.last)
    binner.flush()
    duration = act.last - act.first
    title = (f"{reader.path} ({reader.format.upper()}, {duration:.3f}s, "
             f"{len(sink.lanes)} threads; showing {format_seconds(start - act.first)} to "
             f"{format_seconds(stop - act.first)})")
    return Picture(dict(sorted(sink.lanes.items())), act.first, start, stop, title, act.last)


_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"))


def format_seconds(seconds: float) -> str:
    """A duration in the unit that keeps it between 1 and 1000 (``0.0042`` -> ``4.2 ms``)."""
    magnitude = abs(seconds)
    scale, unit = next(((s, u) for s, u in _UNITS if magnitude >= s), _UNITS[-1])
    if magnitude == 0:
        scale, unit = 1.0, "s"
    return f"{seconds / scale:.4g} {unit}"


def nice_ticks(lo: float, hi: float, target: int = 8) -> list[tuple[float, str]]:
    """Tick positions in [lo, hi] at round steps (1, 2, 5 x 10^k) and their labels.

    The unit (s, ms, us, ns) suits the largest value; the decimals suit the step.
    """
    span = max(hi - lo, 1e-12)
    raw = span / max(target, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))
    largest = max(abs(lo), abs(hi), step)
    scale, unit = next(((s, u) for s, u in _UNITS if largest >= s * (1 - 1e-9)), _UNITS[-1])
    decimals = max(0, -math.floor(math.log10(step / scale) + 1e-9))
    ticks = []
    k = math.ceil(lo / step - 1e-9)
    while k * step <= hi + step * 1e-9:
        value = k * step
        ticks.append((value, f"{value / scale:.{decimals}f} {unit}"))
        k += 1
    return ticks


def render_svg(picture: Picture, width: int = DEFAULT_COLUMNS) -> str:
    """The picture as a standalone SVG document."""
    lanes, start, end = picture.lanes, picture.start, picture.end
    total = max(end - start, 1e-9)
    axis_y = TOP + len(lanes) * (LANE_HEIGHT + LANE_GAP) + 4
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="stmlog-timeline" '
             f'width="{LEFT + width + 20}" height="{axis_y + 40}" '
             f'font-family="sans-serif" font-size="12" data-left="{LEFT}" '
             f'data-width="{width}" data-from="{start - picture.origin!r}" '
             f'data-to="{end - picture.origin!r}">',
             f'<title>{html.escape(picture.title)}</title>',
             f'<text x="{LEFT}" y="20" font-weight="bold">{html.escape(picture.title)}</text>']
    for value, label in nice_ticks(start - picture.origin, end - picture.origin):
        x = LEFT + width * (value - (start - picture.origin)) / total
        parts.append(f'<line class="grid" x1="{x:.1f}" y1="{TOP - 10}" x2="{x:.1f}" '
                     f'y2="{axis_y}" stroke="#e0e0e0"/>'
                     f'<text class="tick" x="{x:.1f}" y="{axis_y + 12}" '
                     f'text-anchor="middle">{label}</text>')
    for index, (thread, lane) in enumerate(lanes.items()):
        parts += _lane_svg(thread, lane, TOP + index * (LANE_HEIGHT + LANE_GAP), width,
                           start - picture.origin, total)
    legend_x = LEFT
    for name, colour in CATEGORIES + tuple((k.replace("_", " "), c)
                                           for k, c in CONFLICT_COLOURS.items()):
        parts.append(f'<rect x="{legend_x}" y="{axis_y + 20}" width="10" height="10" '
                     f'fill="{colour}"/><text x="{legend_x + 14}" y="{axis_y + 29}">{name}</text>')
        legend_x += 30 + 8 * len(name)
    parts.append("</svg>")
    return "\n".join(parts)


def _lane_svg(thread: int, lane: Lane, y: float, width: int, offset: float,
              total: float) -> list[str]:
    """One lane's elements: background, a stacked bar per busy column, conflict ticks."""
    columns = lane.time.shape[1]
    scale = width / columns
    column_span = total / columns
    parts = [f'<g class="lane" data-thread="{thread}">',
             f'<text x="6" y="{y + LANE_HEIGHT * 0.7:.1f}">thread {thread}</text>',
             f'<rect x="{LEFT}" y="{y}" width="{width}" height="{LANE_HEIGHT}" '
             f'fill="#f4f4f4" fill-opacity="0.8"/>']
    for col in np.flatnonzero(lane.time.sum(axis=0) > 0).tolist():
        bottom = y + LANE_HEIGHT
        tip = [format_seconds(offset + col * column_span)]
        for (name, colour), seconds in zip(CATEGORIES, lane.time[:, col].tolist()):
            if seconds <= 0:
                continue
            h = LANE_HEIGHT * min(seconds / column_span, 1.0)
            bottom -= h
            parts.append(f'<rect class="{name}" x="{LEFT + col * scale:.2f}" '
                         f'y="{bottom:.2f}" width="{max(scale, 0.5):.2f}" height="{h:.2f}" '
                         f'fill="{colour}"/>')
            tip.append(f"{name} {format_seconds(seconds)}")
        parts.append(f'<rect x="{LEFT + col * scale:.2f}" y="{y}" '
                     f'width="{max(scale, 0.5):.2f}" height="{LANE_HEIGHT}" fill="transparent">'
                     f'<title>{html.escape(", ".join(tip))}</title></rect>')
    for kind, counts in lane.conflicts.items():
        for col in np.flatnonzero(counts).tolist():
            x = LEFT + (col + 0.5) * scale
            parts.append(f'<path class="conflict {kind}" d="M{x:.2f},{y - 1} l-4,-7 h8 z" '
                         f'fill="{CONFLICT_COLOURS[kind]}"><title>{counts[col]}x '
                         f'{kind.replace("_", " ")}</title></path>')
    parts.append("</g>")
    return parts


#: The HTML page's zoom: drag across the lanes to get the --from/--to of that range.
_ZOOM_SCRIPT = """
(function () {
  var svg = document.querySelector("svg.stmlog-timeline"), out = document.getElementById("zoom");
  var left = +svg.dataset.left, width = +svg.dataset.width;
  var from = +svg.dataset.from, to = +svg.dataset.to, band = null, x0 = null;
  function at(event) {
    var box = svg.getBoundingClientRect(), scale = box.width / svg.width.baseVal.value;
    var x = (event.clientX - box.left) / scale;
    return Math.min(Math.max(x, left), left + width);
  }
  function time(x) { return from + (to - from) * (x - left) / width; }
  svg.addEventListener("mousedown", function (event) {
    x0 = at(event);
    if (band) band.remove();
    band = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    band.setAttribute("y", 0); band.setAttribute("height", svg.height.baseVal.value);
    band.setAttribute("fill", "rgba(60,120,220,0.15)"); band.setAttribute("class", "zoom-band");
    svg.appendChild(band); event.preventDefault();
  });
  svg.addEventListener("mousemove", function (event) {
    if (x0 === null) return;
    var x = at(event);
    band.setAttribute("x", Math.min(x, x0)); band.setAttribute("width", Math.abs(x - x0));
  });
  window.addEventListener("mouseup", function (event) {
    if (x0 === null) return;
    var a = time(Math.min(x0, at(event))), b = time(Math.max(x0, at(event)));
    x0 = null;
    if (b - a <= 0) return;
    out.textContent = "zoom into this range: stmlog timeline " + svg.dataset.file +
      " --from " + a.toPrecision(6) + "s --to " + b.toPrecision(6) + "s -o zoom.html";
  });
})();
"""


def render_html(svg: str, title: str, path: str) -> str:
    """An HTML page around the SVG, readable in any browser, with drag-to-zoom."""
    svg = svg.replace('class="stmlog-timeline"',
                      f'class="stmlog-timeline" data-file="{html.escape(path)}"', 1)
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;margin:1em} svg{max-width:100%;height:auto;"
            "cursor:crosshair} #zoom{font-family:monospace}</style></head>\n<body>\n" + svg +
            "\n<p>Drag across the lanes to zoom into a range.</p><p id=\"zoom\"></p>\n"
            f"<script>{_ZOOM_SCRIPT}</script>\n</body></html>\n")


def write_timeline(source: str | LogInput, output: str, events: str = "final",
                   columns: int = DEFAULT_COLUMNS, progress: ProgressCallback | None = None,
                   crop: bool = True, begin: float | None = None,
                   end: float | None = None) -> int:
    """Draw the log ``source`` into ``output`` (.svg or .html); returns the lane count."""
    picture = collect(source, events, columns, progress, crop, begin, end)
    svg = render_svg(picture, width=columns)
    path = source.path if isinstance(source, LogInput) else source
    text = (render_html(svg, picture.title, path)
            if output.lower().endswith((".html", ".htm")) else svg)
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)
    return len(picture.lanes)


class _TraceSink:
    """A :class:`Sink` writing Chrome trace events (JSON objects) as they come."""

    def __init__(self, write: Callable[[dict], None], origin: Callable[[], float]) -> None:
        self.write = write
        self.origin = origin
        self.threads: set[int] = set()

    def _us(self, t: float) -> float:
        return round((t - self.origin()) * 1e6, 3)

    def _thread(self, thread: int) -> None:
        if thread not in self.threads:
            self.threads.add(thread)
            self.write({"name": "thread_name", "ph": "M", "pid": 1, "tid": thread,
                        "args": {"name": f"thread {thread}"}})

    def interval(self, thread: int, category: str, begin: float, end: float) -> None:
        if category in ("inevitable", "paused") and end > begin:
            self._thread(thread)
            self.write({"name": category, "cat": "stm", "ph": "X", "pid": 1, "tid": thread,
                        "ts": self._us(begin), "dur": round(self._us(end) - self._us(begin), 3)})

    def transaction(self, thread: int, outcome: str, begin: float, end: float) -> None:
        self._thread(thread)
        self.write({"name": outcome, "cat": "transaction", "ph": "X", "pid": 1, "tid": thread,
                    "ts": self._us(begin), "dur": round(self._us(end) - self._us(begin), 3)})

    def mark(self, thread: int, kind: str, time: float, marker: bytes) -> None:
        self._thread(thread)
        event = {"name": kind.replace("_", " "), "cat": "conflict", "ph": "i", "s": "t",
                 "pid": 1, "tid": thread, "ts": self._us(time)}
        if marker:
            event["args"] = {"marker": marker.decode("utf-8", "backslashreplace")}
        self.write(event)


def trace_events(source: str | LogInput, events: str = "final",
                 progress: ProgressCallback | None = None) -> Iterator[dict]:
    """The log as Chrome trace events, in one pass (times in us after the first event).

    Nothing is yielded before the first chunk has been read and checked.
    """
    reader = LogReader(source, events=events, progress=progress)
    queue: list[dict] = []
    origin: list[float] = []
    sink = _TraceSink(queue.append, lambda: origin[0])
    machine = LaneMachine(reader.format, reader.markers, sink)
    last = 0.0
    for chunk in reader.chunks():
        if not origin:
            origin.append(float(chunk.time[0]))
            yield {"name": "process_name", "ph": "M", "pid": 1,
                   "args": {"name": f"{reader.path} ({reader.format.upper()})"}}
        machine.feed(chunk)
        last = float(chunk.time[-1])
        yield from queue
        queue.clear()
    machine.close(last)
    yield from queue


def write_trace(source: str | LogInput, out: IO[str], events: str = "final",
                progress: ProgressCallback | None = None) -> int:
    """Write the Chrome trace-event JSON of the log ``source`` to ``out``; the event count.

    The JSON object format: ``{"traceEvents": [...], "displayTimeUnit": "ms",
    "otherData": {...}}``, written as it is read, so memory stays flat.
    Nothing is written when the log's first chunk cannot be read.
    """
    count = 0
    for event in trace_events(source, events, progress):
        if not count:
            out.write('{"displayTimeUnit": "ms", "otherData": {"tool": "stmlog trace"},\n'
                      ' "traceEvents": [\n')
        out.write((",\n" if count else "") + json.dumps(event, separators=(",", ":")))
        count += 1
    out.write("\n]}\n")
    return count


__all__ = ["collect", "write_timeline", "write_trace", "trace_events", "nice_ticks",
           "format_seconds", "choose_window", "activity", "LaneMachine"]
