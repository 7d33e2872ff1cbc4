"""The writer and the reader agree: round trips, threads, markers, chunk boundaries."""

from __future__ import annotations

import struct
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stmlog_tools.format import (C7_EVENTS, C8_MAX_MARKER, C8_TABLES, make_marker)
from stmlog_tools.reader import LogError, LogReader
from stmlog_tools.writer import STM_TRANSACTION_COMMIT, STM_TRANSACTION_START, LogWriter
from tests.stmlog.conftest import write_c7, write_c8

markers = st.binary(max_size=C8_MAX_MARKER).filter(lambda m: b"\0" not in m)


@st.composite
def c8_records(draw: st.DrawFn, numbering: str = "final") -> list:
    table = C8_TABLES[numbering]
    count = draw(st.integers(1, 60))
    now = draw(st.integers(0, 2**32 - 100)) * 1_000_000_000
    records = []
    for _ in range(count):
        now += draw(st.integers(0, 3_000_000_000))
        sec, nsec = divmod(now, 1_000_000_000)
        records.append(((sec % 2**32, nsec), draw(st.integers(1, 2**32 - 1)),
                        draw(st.sampled_from(table.names)), draw(markers)))
    # Keep time increasing across the uint32 wrap of seconds, as a reader sees it.
    return sorted(records, key=lambda r: r[0])


def read_all(path: Path, **kwargs: object) -> list:
    return list(LogReader(path, **kwargs).events())


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=c8_records(), chunk_size=st.integers(64, 600))
def test_c8_round_trip_any_chunking(tmp_path: Path, records: list, chunk_size: int) -> None:
    path = write_c8(tmp_path / "fuzz.log", records)
    events = read_all(path, chunk_size=chunk_size)
    assert [(e.thread, e.name, e.marker) for e in events] == \
        [(thread, name, marker) for _, thread, name, marker in records]
    assert [e.time for e in events] == [sec + 0.000000001 * nsec for (sec, nsec), *_ in records]


@pytest.mark.parametrize("numbering", ["final", "2015-06", "2015-03"])
def test_each_numbering_reads_back_by_name(tmp_path: Path, numbering: str) -> None:
    table = C8_TABLES[numbering]
    records = [((10, i), 1, name, b"") for i, name in enumerate(table.names)]
    path = write_c8(tmp_path / "n.log", records, events=numbering)
    raw = path.read_bytes()
    assert [raw[16 + 14 * i + 12] for i in range(len(table))] == list(range(len(table)))
    assert [e.name for e in read_all(path, events=numbering)] == list(table.names)


def test_c7_round_trip_with_two_markers_and_other_thread(tmp_path: Path) -> None:
    records = [((5, i * 1000), 1 + i % 3, i % 4, name, b"m1-%d" % i, b"second" * (i % 2))
               for i, name in enumerate(C7_EVENTS.names)]
    path = write_c7(tmp_path / "c7.log", records)
    events = read_all(path, chunk_size=64)
    assert [(e.thread, e.other_thread, e.name, e.marker, e.marker2) for e in events] == \
        [(t, o, n, m1, m2) for _, t, o, n, m1, m2 in records]


def test_writer_is_thread_safe_and_time_ordered(tmp_path: Path) -> None:
    path = tmp_path / "threads.log"
    per_thread = 2000
    with LogWriter(path) as writer:
        def work(num: int) -> None:
            for _ in range(per_thread // 2):
                writer.write(STM_TRANSACTION_START, num)
                writer.write(STM_TRANSACTION_COMMIT, num, b'File "w.py", line %d, in f' % num)
        threads = [threading.Thread(target=work, args=(n,)) for n in range(1, 9)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    chunks = list(LogReader(path).chunks())   # raises on any decreasing timestamp
    thread = np.concatenate([c.thread for c in chunks])
    assert len(thread) == 8 * per_thread
    assert np.bincount(thread).tolist()[1:] == [per_thread] * 8


def test_writer_cuts_long_markers_and_refuses_time_going_back(tmp_path: Path) -> None:
    path = tmp_path / "long.log"
    with LogWriter(path) as writer:
        writer.write("BECOME_INEVITABLE", 1, "x" * 400, timestamp=(1, 0))
        with pytest.raises(ValueError, match="earlier than the previous"):
            writer.write("TRANSACTION_COMMIT", 1, timestamp=(0, 5))
        with pytest.raises(ValueError, match="no event"):
            writer.write("NOT_AN_EVENT", 1)
    (event,) = read_all(path)
    assert event.marker == b"x" * C8_MAX_MARKER


def test_make_marker_keeps_line_number_when_cutting() -> None:
    assert make_marker("app.py", 12, "handler") == b'File "app.py", line 12, in handler'
    assert make_marker(None, None, None) == b'File "?", line 0, in ?'
    long = make_marker("/srv/" + "deep/" * 60 + "app.py", 7, "f" * 200)
    assert len(long) <= C8_MAX_MARKER
    assert b'app.py", line 7, in ' in long and long.startswith(b'File "<')
    assert long.endswith(b">")


def test_writer_accepts_an_open_file_and_leaves_it_open(tmp_path: Path) -> None:
    with open(tmp_path / "f.log", "wb") as f:
        with LogWriter(f) as writer:
            writer.write("TRANSACTION_START", 3, timestamp=2.5)
        assert not f.closed
    (event,) = read_all(tmp_path / "f.log")
    assert (event.time, event.thread, event.name) == (2.5, 3, "STM_TRANSACTION_START")


@pytest.mark.parametrize("first_thread", [1, 100_000])
def test_record_boundaries_match_a_plain_walk_on_marker_heavy_logs(tmp_path: Path,
                                                                   first_thread: int) -> None:
    # Marker bytes that look like headers (zeros, small numbers) try to fool the seeds;
    # thread numbers above 65535 make every real header fail the seed test.
    rng = np.random.default_rng(7)
    tricky = [bytes(rng.integers(0, 20, size=int(rng.integers(0, 160))).astype(np.uint8))
              for _ in range(40)]
    records = [((100 + i // 1000, (i % 1000) * 1000), first_thread + i % 5, "BECOME_INEVITABLE",
                tricky[i % 40]) for i in range(30000)]
    path = write_c8(tmp_path / "tricky.log", records)
    data = path.read_bytes()
    expected, pos = [], 16
    while pos < len(data):
        expected.append(pos)
        pos += 14 + data[pos + 13]
    for chunk_size in (4096, 1 << 20):
        offsets = np.concatenate([c.offset for c in LogReader(path, chunk_size=chunk_size)
                                  .chunks()])
        assert offsets.tolist() == expected


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=700), header=st.sampled_from([b"STMGC-C8-PROF01\n",
                                                             b"STMGC-C7-PROF01\n"]),
       numbering=st.sampled_from(["final", "2015-06", "2015-03"]))
def test_fuzzed_bytes_give_events_or_a_log_error(tmp_path: Path, body: bytes, header: bytes,
                                                 numbering: str) -> None:
    path = tmp_path / "fuzz.bin"
    path.write_bytes(header + body)
    try:
        events = read_all(path, events=numbering, chunk_size=128)
    except LogError as exc:
        assert str(exc).startswith(f"{path}: ")
        assert "\n" not in str(exc)
    else:
        assert events and all(e.offset >= 16 for e in events)


def test_truncated_last_record_is_a_warning(tmp_path: Path) -> None:
    path = write_c8(tmp_path / "t.log", [((1, 0), 1, "TRANSACTION_START", b""),
                                         ((1, 5), 1, "BECOME_INEVITABLE", b"abcdef")])
    path.write_bytes(path.read_bytes()[:-3])
    reader = LogReader(path)
    events = list(reader.events())
    assert [e.name for e in events] == ["STM_TRANSACTION_START"]
    assert reader.warnings == [f"{path}: at byte 30: truncated last record (17 bytes); "
                               f"it is ignored"]


def test_raw_record_layout_is_pypys(tmp_path: Path) -> None:
    path = write_c8(tmp_path / "raw.log", [((7, 8), 9, "WAIT_DONE", b"mk")])
    assert path.read_bytes() == b"STMGC-C8-PROF01\n" + struct.pack("<IIIBB", 7, 8, 9, 11, 2) + b"mk"


def test_writer_from_environment_follows_pypys_variable(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from stmlog_tools.writer import fork_log_path, writer_from_environment
    monkeypatch.delenv("PYPYSTM", raising=False)
    assert writer_from_environment() == (None, False)
    target = tmp_path / "env.log"
    monkeypatch.setenv("PYPYSTM", f"{target}+")
    writer, follow_forks = writer_from_environment()
    assert follow_forks is True and writer is not None
    writer.write("TRANSACTION_START", 1)
    writer.close()
    assert [e.name for e in read_all(target)] == ["STM_TRANSACTION_START"]
    assert fork_log_path(str(target), 4242) == f"{target}.fork4242"


@pytest.mark.freethreaded
def test_c_accelerator_keeps_the_gil_disabled() -> None:
    import subprocess
    import sys
    code = ("import sys, stmlog_tools.analysis as a;"
            "sys.exit(2 if a._fastc8 is None else 1 if sys._is_gil_enabled() else 0)")
    result = subprocess.run([sys.executable, "-c", code])
    if result.returncode == 2:
        pytest.skip("stmlog_tools._fastc8 not built")
    assert result.returncode == 0
