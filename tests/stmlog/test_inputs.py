"""Where ``stmlog`` reads from, and what it accepts: pipes, FIFOs, stdin, and every argument.

Run with the real ``stmlog`` console script in a subprocess, real FIFOs
(os.mkfifo) and real writers (a thread, a process). Nothing may hang:
every subprocess has a timeout far above what the command needs.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from stmlog_tools import cli, logfile
from stmlog_tools.format import C8_HEADER
from stmlog_tools.logfile import LogError, open_log
from stmlog_tools.reader import LogReader
from tests.stmlog.conftest import (
    assert_one_line_error, c_accelerator_built, ms, run_stmlog, write_c8,
)
from tests.stmlog.test_analysis import CORE

STMLOG = str(Path(sys.executable).with_name("stmlog"))


@pytest.fixture
def core_log(tmp_path: Path) -> Path:
    return write_c8(tmp_path / "core.log", CORE)


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log of several reader chunks (4 MiB each), with markers and four threads."""
    records = []
    marker = b'File "/srv/app.py", line 7, in get'
    for i in range(120_000):
        thread = 1 + i % 4
        base = 4 * i
        records += [(ms(base), thread, "TRANSACTION_START", b""),
                    (ms(base + 1), thread, "BECOME_INEVITABLE", marker),
                    (ms(base + 2), thread, "TRANSACTION_COMMIT", b"")]
    return write_c8(tmp_path_factory.mktemp("big") / "big.log", records)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "log.fifo"
    os.mkfifo(path)
    return path


def feed_fifo_from_thread(fifo: Path, data: bytes, delay: float = 0.2) -> threading.Thread:
    """A writer thread: opens the FIFO after ``delay`` seconds and writes ``data``."""
    def write() -> None:
        time.sleep(delay)
        with open(fifo, "wb") as f:
            try:
                f.write(data)
            except BrokenPipeError:
                pass
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def stmlog_with_stdin(data: bytes, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([STMLOG, *args], input=data, capture_output=True, timeout=120)
    return subprocess.CompletedProcess(result.args, result.returncode,
                                       result.stdout.decode(), result.stderr.decode())


def without_file(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "file"}


# --- FIFOs -------------------------------------------------------------------------------

def test_fifo_without_writer_fails_in_one_line_instead_of_hanging(fifo: Path) -> None:
    started = time.monotonic()
    result = run_stmlog("report", str(fifo), "--wait", "0.5")
    assert time.monotonic() - started < 30
    assert_one_line_error(result, str(fifo), "FIFO without a writer", "0.5 s", "--wait")


@pytest.mark.parametrize("engine", ["numpy"] + (["c"] if c_accelerator_built() else []))
@pytest.mark.parametrize("events", ["final", "auto"])
def test_fifo_with_writer_thread_is_read_as_a_stream(fifo: Path, core_log: Path, engine: str,
                                                     events: str) -> None:
    expected = json.loads(run_stmlog("report", str(core_log), "--json").stdout)
    writer = feed_fifo_from_thread(fifo, core_log.read_bytes())
    result = run_stmlog("report", str(fifo), "--json", "--engine", engine, "--events", events)
    writer.join(timeout=30)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["event_count"] == len(CORE)
    assert without_file(report) == without_file(expected)


def test_fifo_with_writer_process_every_command(tmp_path: Path, fifo: Path,
                                                core_log: Path) -> None:
    """dump, timeline (two passes: spooled) and trace on a FIFO fed by `cat` in a process."""
    runs = {"dump": ["dump"], "timeline": ["timeline", "-o", str(tmp_path / "t.html")],
            "trace": ["trace", "-o", str(tmp_path / "t.json")]}
    for name, args in runs.items():
        writer = subprocess.Popen(["sh", "-c", f'sleep 0.2; cat "{core_log}" > "{fifo}"'])
        result = run_stmlog(*args[:1], str(fifo), *args[1:], "--events", "auto")
        assert writer.wait(timeout=30) == 0
        assert result.returncode == 0, (name, result.stderr)
    assert run_stmlog("dump", str(core_log)).stdout.count("\n") == len(CORE)
    assert (tmp_path / "t.html").read_text().count('class="lane"') == 3
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]


def test_fifo_writer_that_writes_nothing_is_an_empty_input(fifo: Path) -> None:
    writer = subprocess.Popen(["sh", "-c", f'exec 3>"{fifo}"; sleep 0.5'])
    result = run_stmlog("report", str(fifo), "--wait", "5")
    writer.wait(timeout=30)
    assert_one_line_error(result, str(fifo), "at byte 0", "empty input (0 bytes)")


def _wait_until_open(pid: int, path: Path, timeout: float = 30.0) -> bool:
    """True once process ``pid`` has ``path`` open (read from /proc/PID/fd)."""
    deadline = time.monotonic() + timeout
    fds = Path(f"/proc/{pid}/fd")
    while time.monotonic() < deadline:
        try:
            if any(os.readlink(fd) == str(path) for fd in fds.iterdir()):
                time.sleep(0.1)       # from open() to the blocking read
                return True
        except OSError:               # an fd closed while we looked
            pass
        time.sleep(0.02)
    return False


def _sigint_as_at_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_while_a_live_writer_is_silent_exits_130(fifo: Path) -> None:
    writer = subprocess.Popen(["sh", "-c", f'exec 3>"{fifo}"; sleep 60'])
    try:
        # A job started in the background by a shell (nohup make test &)
        # inherits SIGINT as ignored, and so would the reader: Ctrl-C comes
        # from a terminal, where SIGINT has its default disposition.
        reader = subprocess.Popen([STMLOG, "report", str(fifo)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True,
                                  preexec_fn=_sigint_as_at_a_terminal)
        # Signal once it has opened the FIFO and waits for data: earlier, on a
        # loaded machine, SIGINT could come before Python handles it at all.
        assert _wait_until_open(reader.pid, fifo), "stmlog never opened the FIFO"
        reader.send_signal(signal.SIGINT)
        out, err = reader.communicate(timeout=30)
    finally:
        writer.kill()
        writer.wait()
    assert reader.returncode == 130
    assert err.strip() == "stmlog: interrupted"


# --- stdin -------------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["numpy"] + (["c"] if c_accelerator_built() else []))
def test_stdin_pipe_gives_the_same_report_as_the_file(big_log: Path, engine: str) -> None:
    expected = json.loads(run_stmlog("report", str(big_log), "--json").stdout)
    result = stmlog_with_stdin(big_log.read_bytes(), "report", "-", "--json", "--engine", engine,
                               "--events", "auto")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["file"] == "<stdin>"
    assert without_file(report) == without_file(expected)


def test_stdin_every_command(tmp_path: Path, big_log: Path) -> None:
    data = big_log.read_bytes()
    dump = stmlog_with_stdin(data, "dump", "-")
    assert dump.returncode == 0 and dump.stdout == run_stmlog("dump", str(big_log)).stdout
    for out in ("pipe.svg", "file.svg"):
        source = "-" if out == "pipe.svg" else str(big_log)
        result = stmlog_with_stdin(data, "timeline", source, "-o", str(tmp_path / out),
                                   "--events", "auto")
        assert result.returncode == 0, result.stderr
    # Same picture from a stream (spooled for the second pass) as from the file.
    pipe_svg = (tmp_path / "pipe.svg").read_text().replace("&lt;stdin&gt;", str(big_log))
    assert pipe_svg == (tmp_path / "file.svg").read_text()
    trace = stmlog_with_stdin(data, "trace", "-")
    assert trace.returncode == 0
    assert sum(e["ph"] == "X" and e["cat"] == "transaction"
               for e in json.loads(trace.stdout)["traceEvents"]) == 120_000


def test_stdin_redirected_from_a_file(core_log: Path) -> None:
    with open(core_log, "rb") as f:
        result = subprocess.run([STMLOG, "report", "-", "--json"], stdin=f, capture_output=True,
                                text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["event_count"] == len(CORE)


@pytest.mark.parametrize("data, fragments", [
    (b"", ["<stdin>: at byte 0: empty input (0 bytes)"]),
    (b"STMGC", ["<stdin>: at byte 0: input too short (5 bytes)"]),
    (C8_HEADER, ["<stdin>: at byte 16: empty log: no complete event"]),
    (C8_HEADER + b"\0" * 5, ["<stdin>: at byte 16: empty log: only a truncated record (5 bytes)"]),
    (b"x" * 40, ["<stdin>: at byte 0: not a PYPYSTM log"]),
])
def test_bad_stdin_gives_one_line(data: bytes, fragments: list[str]) -> None:
    for command in (["report"], ["report", "--engine", "numpy"], ["dump"], ["trace"]):
        assert_one_line_error(stmlog_with_stdin(data, command[0], "-", *command[1:]), *fragments)


def test_stdin_from_a_terminal_is_refused() -> None:
    leader, follower = pty.openpty()
    try:
        result = subprocess.run([STMLOG, "report", "-"], stdin=follower, capture_output=True,
                                text=True, timeout=60)
    finally:
        os.close(follower)
        os.close(leader)
    assert_one_line_error(result, "<stdin>", "standard input is a terminal")


# --- the input layer itself --------------------------------------------------------------

def test_a_stream_is_read_twice_only_when_kept(core_log: Path) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, core_log.read_bytes())
    os.close(write_end)
    sys_stdin = os.dup(0)
    try:
        os.dup2(read_end, 0)
        with open_log("-") as source:
            assert source.size is None and source.format == "c8"
            source.keep()
            reader = LogReader(source)
            first = [e.offset for e in reader.events()]
            second = [e.offset for e in reader.events()]   # replayed from the spool
            assert first == second and len(first) == len(CORE)
            with pytest.raises(RuntimeError, match="keep"):
                list(reader.events())                       # not kept again
    finally:
        os.dup2(sys_stdin, 0)
        os.close(sys_stdin)
        os.close(read_end)


def test_reader_takes_concrete_numberings_only(core_log: Path) -> None:
    with pytest.raises(ValueError, match="resolve_numbering"):
        LogReader(core_log, events="auto")
    with pytest.raises(LogError, match="no such file"):
        LogReader(core_log.with_name("missing.log"))


@pytest.mark.parametrize("command", [["report"], ["report", "--engine", "numpy"], ["dump"],
                                     ["timeline", "-o", "{tmp}/t.html"],
                                     ["trace", "-o", "{tmp}/t.json"]])
@pytest.mark.parametrize("events", ["final", "auto"])
def test_the_header_is_checked_once_per_command(tmp_path: Path, core_log: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str],
                                                command: list[str], events: str) -> None:
    # The guess, both timeline passes, the reader and the C pass all read through the
    # one input the command opened.
    checked: list[str] = []
    real_check = logfile._header_format

    def counting_check(path: str, header: bytes, size: int | None) -> str:
        checked.append(path)
        return real_check(path, header, size)

    monkeypatch.setattr(logfile, "_header_format", counting_check)
    name, *options = [arg.replace("{tmp}", str(tmp_path)) for arg in command]
    assert cli.main([name, str(core_log), *options, "--events", events, "--no-progress"]) == 0
    assert checked == [str(core_log)]
    capsys.readouterr()


# --- arguments ---------------------------------------------------------------------------

@pytest.mark.parametrize("args, fragments", [
    (["timeline", "{log}", "-o", "{out}", "--width", "0"], ["argument --width", "from 1 to 20000, got 0"]),
    (["timeline", "{log}", "-o", "{out}", "--width", "-5"], ["argument --width", "got -5"]),
    (["timeline", "{log}", "-o", "{out}", "--width", "10000000000"], ["argument --width", "got 10000000000"]),
    (["timeline", "{log}", "-o", "{out}", "--width", "wide"], ["argument --width", "whole number"]),
    (["timeline", "{log}", "-o", "{out}", "--from", "-1"], ["argument --from", "0 or more"]),
    (["timeline", "{log}", "-o", "{out}", "--from", "soon"], ["argument --from", "250ms"]),
    (["timeline", "{log}", "-o", "{out}", "--from", "inf"], ["argument --from"]),
    (["timeline", "{log}", "-o", "{out}", "--to", "1e999"], ["argument --to", "finite"]),
    (["timeline", "{log}", "-o", "{out}", "--from", "300ms", "--to", "0.2"], ["argument --to", "after --from"]),
    (["timeline", "{log}", "-o", "{out}", "--from", "5s"], ["argument --from", "after the end of the log (600 ms)"]),
    (["timeline", "{log}", "-o", "{dir}/out.png"], ["argument -o/--output", "must end in .html, .htm or .svg"]),
    (["timeline", "{log}", "-o", "{dir}/missing/out.svg"], ["argument -o/--output", "does not exist"]),
    (["timeline", "{log}", "-o", "{dir}/dir.svg"], ["argument -o/--output", "is a directory"]),
    (["timeline", "{log}"], ["the following arguments are required: -o/--output"]),
    (["trace", "{log}", "-o", "{dir}/out.txt"], ["argument -o/--output", ".json (or be -)"]),
    (["report", "{log}", "--top", "-1"], ["argument --top", "got -1"]),
    (["report", "{log}", "--top", "many"], ["argument --top", "whole number"]),
    (["report", "{log}", "--engine", "fast"], ["argument --engine", "invalid choice"]),
    (["report", "{log}", "--events", "2016"], ["argument --events", "invalid choice"]),
    (["report", "{log}", "--wait", "-2"], ["argument --wait", "0 or more"]),
    (["report", "{log}", "--wait", "2days"], ["argument --wait"]),
    (["report", "{log}", "--wait", "1e9"], ["argument --wait", "at most 86400"]),
    (["report", "{log}", "--bogus"], ["unrecognized arguments: --bogus"]),
    (["report"], ["the following arguments are required: FILE"]),
    (["explain", "{log}"], ["argument COMMAND", "invalid choice"]),
    ([], ["the following arguments are required: COMMAND"]),
])
def test_every_bad_argument_gives_one_line_and_status_2(tmp_path: Path, core_log: Path,
                                                        args: list[str],
                                                        fragments: list[str]) -> None:
    (tmp_path / "dir.svg").mkdir()
    values = {"log": str(core_log), "out": str(tmp_path / "out.svg"), "dir": str(tmp_path)}
    result = run_stmlog(*(a.format(**values) for a in args))
    assert_one_line_error(result, "error: ", *fragments)
    assert not (tmp_path / "out.svg").exists()


def test_good_arguments_in_every_spelling(tmp_path: Path, core_log: Path) -> None:
    out = tmp_path / "out.svg"
    for extra in (["--width", "1"], ["--width", "20000"], ["--from", "100ms", "--to", "0.3s"],
                  ["--from", "100000us"], ["--to", "500000000ns"], ["--no-crop"]):
        result = run_stmlog("timeline", str(core_log), "-o", str(out), *extra)
        assert result.returncode == 0, (extra, result.stderr)
    assert run_stmlog("report", str(core_log), "--top", "0", "--wait", "1.5s").returncode == 0
