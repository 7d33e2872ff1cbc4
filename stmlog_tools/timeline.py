"""Draw a PYPYSTM log as a picture: one lane per thread, time left to right (SVG or HTML).

Each lane shows, for every pixel column, how that slice of time was spent
on the thread: running a transaction that later committed, one that later
aborted, running inevitably, or paused (waiting). Ticks above a lane mark
conflicts: contentions (write-read in C8) and waits for another
inevitable transaction. Hovering a column shows its figures.

However long the log, the picture has a fixed number of columns: the log
is read twice (first for its time span, then to add each interval to the
columns it overlaps), so memory stays flat.

C8 logs only use final-numbering events; C7 logs draw transactions and
pauses (C7 has no inevitable event).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np

from stmlog_tools.format import C7_EVENTS, C8_FINAL
from stmlog_tools.reader import LogReader, ProgressCallback

#: Categories of time, in drawing order (bottom to top of a lane), with colours.
CATEGORIES = (("committed", "#3a9a4a"), ("inevitable", "#3366cc"),
              ("aborted", "#d03030"), ("paused", "#b0b0b0"))
CONFLICT_COLOURS = {"contention": "#a00000", "inevitable_wait": "#e08000"}

LANE_HEIGHT = 28
LANE_GAP = 14
LEFT = 90
TOP = 40


@dataclass
class _Lane:
    """One thread's columns, and the transaction it is in the middle of."""

    time: np.ndarray                  # (categories, columns) seconds per column
    conflicts: dict[str, np.ndarray]  # kind -> count per column
    txn_start: float | None = None
    state_since: float = 0.0
    state: str = "stop"               # stop | run | inevitable | paused
    resume: str = "run"               # the state a WAIT_DONE returns to
    pending: list[tuple[str, float, float]] = field(default_factory=list)


class _Binner:
    """Adds time intervals to fixed-width columns spanning [start, end].

    Intervals are buffered and added a chunk at a time, vectorised: the time
    an interval set covers left of x is sum(max(0, x - begin)) - sum(max(0,
    x - end)), evaluated at every column edge with sorted prefix sums.
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

    def column(self, t: float) -> int:
        return min(max(int((t - self.start) / self.width), 0), self.columns - 1)


def _span(reader: LogReader) -> tuple[float, float]:
    first = last = None
    for chunk in reader.chunks():
        if first is None:
            first = float(chunk.time[0])
        last = float(chunk.time[-1])
    assert first is not None and last is not None   # chunks() raises on an empty log
    return first, last


def collect(path: str, events: str = "final", columns: int = 1000,
            progress: ProgressCallback | None = None) -> tuple[dict[int, _Lane], float, float,
                                                              str]:
    """Per-thread lanes of column figures, and the time span, for the log at ``path``."""
    reader = LogReader(path, events=events, progress=progress)
    fmt = reader.format
    start, end = _span(reader)
    binner = _Binner(start, end, columns)
    category_index = {name: i for i, (name, _) in enumerate(CATEGORIES)}
    lanes: dict[int, _Lane] = {}

    def lane_of(thread: int) -> _Lane:
        lane = lanes.get(thread)
        if lane is None:
            lane = lanes[thread] = _Lane(np.zeros((len(CATEGORIES), columns)),
                                         {kind: np.zeros(columns, dtype=np.int64)
                                          for kind in CONFLICT_COLOURS})
        return lane

    def enter(lane: _Lane, state: str, now: float) -> None:
        if lane.state in ("run", "inevitable", "paused") and lane.txn_start is not None:
            lane.pending.append((lane.state, lane.state_since, now))
        lane.state, lane.state_since = state, now

    def finish(lane: _Lane, outcome: str, now: float) -> None:
        enter(lane, "stop", now)
        for state, begin, stop in lane.pending:
            if state == "paused":
                category = "paused"
            elif outcome == "aborted":
                category = "aborted"
            else:
                category = "inevitable" if state == "inevitable" else "committed"
            binner.add(lane.time, category_index[category], begin, stop)
        lane.pending.clear()
        lane.txn_start = None

    # What each event does to a lane, by event number (C8 final or C7 numbering).
    names = [names_event(n) for n in (C7_EVENTS.names if fmt == "c7" else C8_FINAL.names)]
    action = [("start" if n == "TRANSACTION_START" else
               "commit" if n == "TRANSACTION_COMMIT" else
               "abort" if n == "TRANSACTION_ABORT" else
               "inevitable" if n in ("BECOME_INEVITABLE", "TRANSACTION_REATTACH") else
               "wait_inevitable" if n == "WAIT_OTHER_INEVITABLE" else
               "resume" if n == "WAIT_DONE" else
               "wait" if n.startswith("WAIT_") else
               "contention" if n.startswith("CONTENTION_") else None) for n in names]
    for chunk in reader.chunks():   # second pass over the file: the columns
        for now, thread, event in zip(chunk.time.tolist(), chunk.thread.tolist(),
                                      chunk.event.tolist()):
            what = action[event]
            if what is None:
                continue
            lane = lane_of(thread)
            if what == "start":
                lane.pending.clear()
                lane.txn_start = now
                lane.state, lane.state_since, lane.resume = "run", now, "run"
            elif what == "commit" or what == "abort":
                finish(lane, "committed" if what == "commit" else "aborted", now)
            elif what == "inevitable":
                enter(lane, "inevitable", now)
                lane.resume = "inevitable"
            elif what == "resume":
                enter(lane, lane.resume, now)
            elif what == "contention":
                lane.conflicts["contention"][binner.column(now)] += 1
            else:   # a wait
                enter(lane, "paused", now)
                if what == "wait_inevitable":
                    lane.conflicts["inevitable_wait"][binner.column(now)] += 1
        binner.flush()
    for lane in lanes.values():
        if lane.txn_start is not None:   # still running when the log ends
            finish(lane, "committed", end)
    binner.flush()
    return dict(sorted(lanes.items())), start, end, fmt


def names_event(name: str) -> str:
    return name[4:] if name.startswith("STM_") else name


def render_svg(lanes: dict[int, _Lane], start: float, end: float, title: str,
               width: int = 1000) -> str:
    """The picture as a standalone SVG document."""
    height = TOP + len(lanes) * (LANE_HEIGHT + LANE_GAP) + 40
    total = max(end - start, 1e-9)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="stmlog-timeline" '
             f'width="{LEFT + width + 20}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<title>{html.escape(title)}</title>',
             f'<text x="{LEFT}" y="20" font-weight="bold">{html.escape(title)}</text>']
    for index, (thread, lane) in enumerate(lanes.items()):
        y = TOP + index * (LANE_HEIGHT + LANE_GAP)
        columns = lane.time.shape[1]
        scale = width / columns
        column_span = total / columns
        parts.append(f'<g class="lane" data-thread="{thread}">')
        parts.append(f'<text x="6" y="{y + LANE_HEIGHT * 0.7:.1f}">thread {thread}</text>')
        parts.append(f'<rect x="{LEFT}" y="{y}" width="{width}" height="{LANE_HEIGHT}" '
                     f'fill="#f4f4f4"/>')
        busy = np.flatnonzero(lane.time.sum(axis=0) > 0)
        for col in busy.tolist():
            bottom = y + LANE_HEIGHT
            tip = [f"{start + col * column_span:.6f}s"]
            for (name, colour), seconds in zip(CATEGORIES, lane.time[:, col].tolist()):
                if seconds <= 0:
                    continue
                h = LANE_HEIGHT * min(seconds / column_span, 1.0)
                bottom -= h
                parts.append(f'<rect class="{name}" x="{LEFT + col * scale:.2f}" '
                             f'y="{bottom:.2f}" width="{max(scale, 0.5):.2f}" height="{h:.2f}" '
                             f'fill="{colour}"/>')
                tip.append(f"{name} {seconds * 1e3:.3f} ms")
            parts.append(f'<rect x="{LEFT + col * scale:.2f}" y="{y}" '
                         f'width="{max(scale, 0.5):.2f}" '
                         f'height="{LANE_HEIGHT}" fill="transparent">'
                         f'<title>{html.escape(", ".join(tip))}</title></rect>')
        for kind, counts in lane.conflicts.items():
            for col in np.flatnonzero(counts).tolist():
                x = LEFT + (col + 0.5) * scale
                parts.append(f'<path class="conflict {kind}" d="M{x:.2f},{y - 1} l-4,-7 h8 z" '
                             f'fill="{CONFLICT_COLOURS[kind]}"><title>{counts[col]}x '
                             f'{kind.replace("_", " ")}</title></path>')
        parts.append("</g>")
    axis_y = TOP + len(lanes) * (LANE_HEIGHT + LANE_GAP) + 4
    for i in range(6):
        x = LEFT + width * i / 5
        parts.append(f'<text x="{x:.1f}" y="{axis_y + 12}" text-anchor="middle">'
                     f'{total * i / 5:.3f}s</text>')
    legend_x = LEFT
    for name, colour in CATEGORIES + tuple((k.replace("_", " "), c)
                                           for k, c in CONFLICT_COLOURS.items()):
        parts.append(f'<rect x="{legend_x}" y="{axis_y + 20}" width="10" height="10" '
                     f'fill="{colour}"/><text x="{legend_x + 14}" y="{axis_y + 29}">{name}</text>')
        legend_x += 30 + 8 * len(name)
    parts.append("</svg>")
    parts[0] = parts[0].replace(f'height="{height}"', f'height="{axis_y + 40}"')
    return "\n".join(parts)


def render_html(svg: str, title: str) -> str:
    """An HTML page around the SVG, readable in any browser."""
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;margin:1em} svg{max-width:100%;height:auto}"
            "</style></head>\n<body>\n" + svg + "\n</body></html>\n")


def write_timeline(path: str, output: str, events: str = "final", columns: int = 1000,
                   progress: ProgressCallback | None = None) -> int:
    """Draw the log at ``path`` into ``output`` (.svg or .html); returns the lane count."""
    lanes, start, end, fmt = collect(path, events, columns, progress)
    title = f"{path} ({fmt.upper()}, {end - start:.3f}s, {len(lanes)} threads)"
    svg = render_svg(lanes, start, end, title, width=columns)
    text = render_html(svg, title) if output.lower().endswith((".html", ".htm")) else svg
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)
    return len(lanes)
