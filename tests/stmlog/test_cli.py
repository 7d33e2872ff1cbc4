"""The ``stmlog`` command run for real: report, --json, dump, timeline, errors, --events auto."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from stmlog_tools.format import C8_HEADER
from tests.stmlog.conftest import (
    ENGINES, assert_one_line_error, c_accelerator_built, ms, run_stmlog, same_report, write_c8,
)
from tests.stmlog.test_analysis import CORE, W


@pytest.fixture
def core_log(tmp_path: Path) -> Path:
    return write_c8(tmp_path / "core.log", CORE)


def test_report_text_keeps_pypys_layout(core_log: Path) -> None:
    result = run_stmlog("report", str(core_log))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1:10] == [
        "Total real time:         0.600s",
        "CPU time in STM mode:    0.750s (125%) committed",
        "                         0.260s ( 43%) aborted",
        "                         0.170s ( 28%) paused",
        "                         1.180s (196%) TOTAL",
        "           including     0.010s (1.7%) minor GC collections",
        "                 and     0.020s (3.3%) major GC collections",
        "Total number of transactions:      4 committed:  75% aborted:  25%",
        "     transactions per second:      3",
    ]
    first = lines.index("0.240s lost in aborts, 0.000s paused (1x STM_CONTENTION_WRITE_READ)")
    assert lines[first + 1] == f"  {W.decode()}"
    assert lines[first + 2].startswith("time line: |") and lines[first + 2].endswith("|")
    assert len(lines[first + 2]) == len("time line: ||") + 60
    assert "0.000s lost in aborts, 0.150s paused (1x STM_BECOME_INEVITABLE)" in lines
    assert "Per thread (stmlog additions):" in lines
    assert result.stderr == ""


def test_engines_print_thesame_report(core_log: Path) -> None:
    if not c_accelerator_built():
        pytest.skip("stmlog_tools._fastc8 not built")
    by_c = run_stmlog("report", str(core_log), "--json", "--engine", "c")
    by_numpy = run_stmlog("report", str(core_log), "--json", "--engine", "numpy")
    assert by_c.returncode == by_numpy.returncode == 0
    assert same_report(json.loads(by_c.stdout), json.loads(by_numpy.stdout))


def test_report_json_and_module_entry_point_agree(core_log: Path) -> None:
    by_script = run_stmlog("report", str(core_log), "--json")
    by_module = run_stmlog("report", str(core_log), "--json", module=True)
    assert by_script.returncode == by_module.returncode == 0
    assert by_script.stdout == by_module.stdout
    report = json.loads(by_script.stdout)
    assert report["format"] == "c8" and report["events"] == "final"
    assert set(report["cpu_time"]) >= {"committed", "aborted", "paused", "gc_minor", "gc_major"}
    assert [c["count"] for c in report["conflicts"]] == [1, 1]
    assert report["conflicts"][0]["aborted_time"] == pytest.approx(0.24)


def test_report_source_line_under_a_readable_marker(tmp_path: Path) -> None:
    source = tmp_path / "handler.py"
    source.write_text("import time\n\ndef get(self):\n    stamp = time.time()  # here\n")
    marker = f'File "{source}", line 4, in get'.encode()
    log = write_c8(tmp_path / "src.log", [
        (ms(0), 1, "TRANSACTION_START", b""), (ms(1), 1, "BECOME_INEVITABLE", marker),
        (ms(2), 2, "TRANSACTION_START", b""), (ms(3), 2, "BECOME_INEVITABLE", marker),
        (ms(4), 2, "WAIT_OTHER_INEVITABLE", b""), (ms(6), 1, "TRANSACTION_COMMIT", b""),
        (ms(7), 2, "WAIT_DONE", b""), (ms(8), 2, "TRANSACTION_COMMIT", b"")])
    text = run_stmlog("report", str(log)).stdout
    assert f"  {marker.decode()}\n    stamp = time.time()  # here\n" in text
    report = json.loads(run_stmlog("report", str(log), "--json").stdout)
    assert report["conflicts"][0]["sources"] == ["stamp = time.time()  # here"]
    assert report["locations"][0]["file"] == str(source)


def test_report_top_limits_conflicts(core_log: Path) -> None:
    report = json.loads(run_stmlog("report", str(core_log), "--json", "--top", "1").stdout)
    assert len(report["conflicts"]) == 1
    text = run_stmlog("report", str(core_log), "--top", "1").stdout
    assert "STM_BECOME_INEVITABLE)" not in text


def test_dump_prints_one_event_a_line(core_log: Path) -> None:
    result = run_stmlog("dump", str(core_log))
    lines = result.stdout.splitlines()
    assert len(lines) == len(CORE)
    assert lines[0].split() == ["16", "1000.000000000", "[1]", "STM_TRANSACTION_START"]
    assert lines[6].endswith(f"STM_CONTENTION_WRITE_READ  {W.decode()}")


def test_dump_reads_older_numberings(tmp_path: Path) -> None:
    log = write_c8(tmp_path / "old.log", CORE, events="2015-03")
    final = run_stmlog("dump", str(log)).stdout
    right = run_stmlog("dump", str(log), "--events", "2015-03").stdout
    assert "STM_CONTENTION_WRITE_READ" in right and right != final


@pytest.mark.parametrize("numbering", ["final", "2015-06", "2015-03"])
def test_events_auto_guesses_the_numbering(tmp_path: Path, numbering: str) -> None:
    log = write_c8(tmp_path / "guess.log", CORE * 1, events=numbering)
    report = json.loads(run_stmlog("report", str(log), "--json", "--events", "auto").stdout)
    assert report["events"] == numbering
    assert report["cpu_time"]["aborted"] == pytest.approx(0.26)


def test_timeline_writes_svg_and_html(tmp_path: Path, core_log: Path) -> None:
    for name in ("out.svg", "out.html"):
        out = tmp_path / name
        result = run_stmlog("timeline", str(core_log), "-o", str(out))
        assert result.returncode == 0, result.stderr
        text = out.read_text()
        assert text.count('class="lane"') == 3
        assert 'class="conflict contention"' in text
        assert 'class="aborted"' in text and 'class="committed"' in text
    bad = run_stmlog("timeline", str(core_log), "-o", str(tmp_path / "out.png"))
    assert_one_line_error(bad, "argument -o/--output", "must end in .html, .htm or .svg")


def _record(sec: int, nsec: int, thread: int, event: int, marker: bytes = b"") -> bytes:
    return struct.pack("<IIIBB", sec, nsec, thread, event, len(marker)) + marker


def test_bad_inputs_give_one_line_and_status_2(tmp_path: Path) -> None:
    engines = ["numpy"] + (["c"] if c_accelerator_built() else [])
    cases = {
        "wrong-header.log": (b"NOT-A-STM-LOG!!\n" + _record(1, 0, 1, 0),
                             ["at byte 0", "not a PYPYSTM log"]),
        "zero.log": (b"", ["at byte 0", "empty file (0 bytes)"]),
        "short.log": (b"STMGC", ["at byte 0", "too short"]),
        "empty.log": (C8_HEADER, ["at byte 16", "empty log"]),
        "event.log": (C8_HEADER + _record(1, 0, 1, 0) + _record(1, 5, 1, 16),
                      ["at byte 30", "unknown event number 16"]),
        "decreasing.log": (C8_HEADER + _record(2, 0, 1, 0) + _record(1, 999, 1, 1),
                           ["at byte 30", "decreasing timestamp"]),
        "marker.log": (C8_HEADER + _record(1, 0, 1, 5, b"x" * 200),
                       ["at byte 16", "marker length 200 exceeds"]),
    }
    for name, (content, fragments) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        runs = [["dump"], ["timeline", "-o", str(tmp_path / "o.svg")]]
        runs += [["report", "--engine", engine] for engine in engines]
        for command, *extra in runs:
            assert_one_line_error(run_stmlog(command, str(path), *extra), str(path), *fragments)
    assert_one_line_error(run_stmlog("report", str(tmp_path)), str(tmp_path), "is a directory")
    missing = tmp_path / "missing.log"
    assert_one_line_error(run_stmlog("report", str(missing)), str(missing), "no such file")


def test_numbering_decides_what_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "old.log"
    path.write_bytes(C8_HEADER + _record(1, 0, 1, 13))   # a GC event in final, unknown in 2015-03
    assert run_stmlog("report", str(path)).returncode == 0
    assert_one_line_error(run_stmlog("report", str(path), "--events", "2015-03"),
                           "at byte 16", "unknown event number 13", "2015-03")


@pytest.mark.parametrize("engine", ENGINES)
def test_truncated_last_record_warns_and_reports_the_rest(tmp_path: Path, core_log: Path,
                                                          engine: str) -> None:
    data = core_log.read_bytes()
    cut = tmp_path / "cut.log"
    cut.write_bytes(data + _record(1001, 0, 1, 0)[:9])
    result = run_stmlog("report", str(cut), "--json", "--engine", engine)
    assert result.returncode == 0
    assert f"at byte {len(data)}: truncated last record (9 bytes)" in result.stderr
    assert json.loads(result.stdout)["event_count"] == len(CORE)


def test_help_for_every_command() -> None:
    for command in ([], ["report"], ["dump"], ["timeline"]):
        result = run_stmlog(*command, "--help")
        assert result.returncode == 0 and "usage: stmlog" in result.stdout


def test_progress_shows_on_a_terminal_only(tmp_path: Path, core_log: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    try:
        command = [sys.executable, "-m", "stmlog_tools", "report", str(core_log), "--json"]
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=follower, timeout=120)
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:   # the terminal is closed once everything is read
                break
            if not data:
                break
            shown += data
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert result.returncode == 0
    assert f"reading {core_log}: 100.0%".encode() in shown
    # Not a terminal: nothing on stderr.
    assert run_stmlog("report", str(core_log), "--json").stderr == ""


def test_c7_report_text_timeline_and_any_engine(tmp_path: Path) -> None:
    from tests.stmlog.conftest import write_c7
    log = write_c7(tmp_path / "c7.log", [
        (ms(0), 1, 0, "TRANSACTION_START", b"", b""),
        (ms(100), 1, 2, "CONTENTION_WRITE_WRITE", b"A", b"B"),
        (ms(200), 1, 0, "TRANSACTION_ABORT", b"", b""),
        (ms(250), 2, 0, "TRANSACTION_START", b"", b""),
        (ms(400), 2, 0, "TRANSACTION_COMMIT", b"", b""),
    ])
    lines = run_stmlog("report", str(log), "--engine", "c").stdout.splitlines()
    assert lines[:2] == ["Total real time:             0.400s",
                         "Total CPU time in STM mode:  0.350s (87%)"]
    assert "0.200s lost in aborts, 0.000s paused (1x STM_CONTENTION_WRITE_WRITE)" in lines
    block = lines.index("0.200s lost in aborts, 0.000s paused (1x STM_CONTENTION_WRITE_WRITE)")
    assert lines[block + 1:block + 3] == ["  A", "  B"]
    # One contention at 100 ms of 400: bucket int(0.25 * 48) = 12 of 48.
    assert lines[block + 3] == "time line: " + "." * 12 + "x" + "." * 35
    out = tmp_path / "c7.svg"
    assert run_stmlog("timeline", str(log), "-o", str(out)).returncode == 0
    assert out.read_text().count('class="lane"') == 2


def test_dump_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    """`stmlog dump big.log | head -1`: no error line, exit status 0."""
    import subprocess
    import sys

    records = [((1000 + i, 0), 1, "STM_TRANSACTION_START", b"") for i in range(100_000)]
    log = write_c8(tmp_path / "big.log", records)
    dump = subprocess.Popen([sys.executable, "-m", "stmlog_tools", "dump", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert dump.stdout.readline()
    dump.stdout.close()
    assert dump.wait(timeout=120) == 0
    assert dump.stderr.read() == b""
