"""The timeline's window (cropping, --from/--to), its ticks, and the Chrome trace export.

The trace is checked by loading it as Perfetto and chrome://tracing would:
JSON parse, then the trace-event schema (phases, required fields, units)
and the nesting of slices on each thread.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from stmlog_tools.timeline import CATEGORIES, collect, format_seconds, nice_ticks
from tests.stmlog.conftest import ms, run_stmlog, write_c8
from tests.stmlog.test_analysis import CORE

ROW = {name: i for i, (name, _) in enumerate(CATEGORIES)}


def shifted(records: list, seconds: int) -> list:
    return [((sec + seconds, nsec), thread, name, marker)
            for (sec, nsec), thread, name, marker in records]


@pytest.fixture
def idle_log(tmp_path: Path) -> Path:
    """CORE five seconds into the log, with lone GC events (no transactions) at 0 s and 9 s."""
    records = [(ms(0), 9, "GC_MINOR_START", b""), (ms(1), 9, "GC_MINOR_DONE", b"")]
    records += shifted(CORE, 5) + [(ms(9000), 9, "GC_MINOR_START", b"")]
    return write_c8(tmp_path / "idle.log", records)


def test_idle_time_is_cropped_at_both_ends_by_default(idle_log: Path) -> None:
    picture = collect(str(idle_log))
    assert picture.start - picture.origin == pytest.approx(5.0)    # the first START
    assert picture.end - picture.origin == pytest.approx(5.6)      # the last COMMIT
    whole = collect(str(idle_log), crop=False)
    assert whole.end - whole.origin == pytest.approx(9.0)
    # The same work in both pictures, in fewer columns when not cropped.
    assert picture.lanes[1].time.sum() == pytest.approx(whole.lanes[1].time.sum())


def test_from_to_window_holds_exactly_the_overlapping_time(idle_log: Path) -> None:
    # Thread 1: committed-running 0..100 ms, inevitable 100..300 ms (after 5 s).
    picture = collect(str(idle_log), columns=50, begin=5.05, end=5.15)
    lane = picture.lanes[1].time
    assert lane[ROW["committed"]].sum() == pytest.approx(0.05)
    assert lane[ROW["inevitable"]].sum() == pytest.approx(0.05)
    assert lane.sum(axis=0).max() <= 0.1 / 50 * (1 + 1e-9)   # no column over-full
    # Thread 3's contentions at 250 and 260 ms are outside this window.
    assert picture.lanes[3].conflicts["contention"].sum() == 0
    inside = collect(str(idle_log), columns=50, begin=5.2, end=5.3)
    assert inside.lanes[3].conflicts["contention"].sum() == 2


def test_window_in_the_cli_and_its_ticks(tmp_path: Path, idle_log: Path) -> None:
    out = tmp_path / "zoom.html"
    result = run_stmlog("timeline", str(idle_log), "-o", str(out), "--from", "5.1s",
                        "--to", "5200ms")
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    assert 'data-from="5.1' in page and 'data-to="5.2' in page
    ticks = [part.split(">")[1].split("<")[0] for part in page.split('class="tick"')[1:]]
    assert ticks == ["5.10 s", "5.12 s", "5.14 s", "5.16 s", "5.18 s", "5.20 s"]
    assert "Drag across the lanes to zoom" in page and "--from" in page


@pytest.mark.parametrize("lo, hi, labels", [
    (0.0, 0.6, ["0 ms", "100 ms", "200 ms", "300 ms", "400 ms", "500 ms", "600 ms"]),
    (0.0, 9.0, ["0 s", "2 s", "4 s", "6 s", "8 s"]),
    (0.0, 35e-6, ["0 us", "5 us", "10 us", "15 us", "20 us", "25 us", "30 us", "35 us"]),
    (5.0, 5.6, ["5.0 s", "5.1 s", "5.2 s", "5.3 s", "5.4 s", "5.5 s", "5.6 s"]),
])
def test_ticks_fall_on_round_values(lo: float, hi: float, labels: list[str]) -> None:
    assert [label for _, label in nice_ticks(lo, hi)] == labels


def test_format_seconds_picks_the_unit() -> None:
    assert [format_seconds(s) for s in (0, 0.6, 2.5, 4.2e-3, 7e-6, 3e-9)] == [
        "0 s", "600 ms", "2.5 s", "4.2 ms", "7 us", "3 ns"]


# --- the Chrome trace-event export ------------------------------------------------------

PHASES = {"X", "i", "M"}


def load_trace(path: Path) -> list[dict]:
    """Parse and check a trace the way a trace viewer needs it; the events."""
    document = json.loads(path.read_text())
    assert isinstance(document, dict) and isinstance(document["traceEvents"], list)
    assert document["displayTimeUnit"] in ("ms", "ns")
    events = document["traceEvents"]
    for event in events:
        assert event["ph"] in PHASES, event
        assert isinstance(event["name"], str) and isinstance(event["pid"], int)
        if event["ph"] == "M":
            assert event["name"] in ("process_name", "thread_name")
            assert isinstance(event["args"]["name"], str)
            continue
        assert isinstance(event["tid"], int) and isinstance(event["cat"], str)
        assert isinstance(event["ts"], (int, float)) and event["ts"] >= 0
        if event["ph"] == "X":
            assert isinstance(event["dur"], (int, float)) and event["dur"] >= 0
        else:
            assert event["s"] in ("t", "p", "g")
    return events


def test_trace_is_valid_chrome_trace_json(tmp_path: Path) -> None:
    log = write_c8(tmp_path / "core.log", CORE)
    out = tmp_path / "core.json"
    result = run_stmlog("trace", str(log), "-o", str(out))
    assert result.returncode == 0, result.stderr
    events = load_trace(out)
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert names == {1: "thread 1", 2: "thread 2", 3: "thread 3"}
    transactions = sorted((e["tid"], e["name"], e["ts"], e["dur"]) for e in events
                          if e["ph"] == "X" and e["cat"] == "transaction")
    assert transactions == [(1, "committed", 0.0, 300000.0), (2, "committed", 50000.0, 350000.0),
                            (3, "aborted", 10000.0, 260000.0),
                            (3, "committed", 330000.0, 270000.0)]
    # Every nested slice lies inside one of its thread's transactions.
    outer = defaultdict(list)
    for tid, _, ts, dur in transactions:
        outer[tid].append((ts, ts + dur))
    inner = [e for e in events if e["ph"] == "X" and e["cat"] == "stm"]
    assert {e["name"] for e in inner} == {"inevitable", "paused"}
    for e in inner:
        assert any(lo <= e["ts"] and e["ts"] + e["dur"] <= hi for lo, hi in outer[e["tid"]]), e
    contentions = [e for e in events if e["name"] == "contention"]
    assert [(e["tid"], e["ts"]) for e in contentions] == [(3, 250000.0), (3, 260000.0)]
    assert contentions[0]["args"]["marker"].startswith('File "/srv/app/model.py"')


def test_trace_to_stdout_matches_the_file(tmp_path: Path) -> None:
    log = write_c8(tmp_path / "core.log", CORE)
    out = tmp_path / "core.json"
    assert run_stmlog("trace", str(log), "-o", str(out)).returncode == 0
    assert run_stmlog("trace", str(log)).stdout == out.read_text()


def test_trace_of_a_damaged_log_leaves_no_file(tmp_path: Path) -> None:
    log = tmp_path / "bad.log"
    log.write_bytes(write_c8(tmp_path / "core.log", CORE).read_bytes()[:16] + b"\xff" * 14)
    out = tmp_path / "bad.json"
    result = run_stmlog("trace", str(log), "-o", str(out))
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert not out.exists() and not Path(str(out) + ".part").exists()
