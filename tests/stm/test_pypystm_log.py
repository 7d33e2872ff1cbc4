"""The PYPYSTM log our runtime writes, read back with stmlog_tools."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from stmlog_tools.reader import LogReader

SCRIPT = textwrap.dedent('''
    import transaction

    shared = {"n": 0}

    def work(i):
        value = shared["n"]
        shared["n"] = value + 1
        if i % 50 == 0:
            print("checkpoint", i)

    for i in range(400):
        transaction.add(work, i)
    transaction.run()
    assert shared["n"] == 400
''')


def _run_logged(tmp_path: Path, log_value: str, source: str = SCRIPT) -> Path:
    """Run ``source`` as a script under ``tornado-stm exec`` with PYPYSTM=log_value."""
    script = tmp_path / "logged.py"
    script.write_text(source)
    result = subprocess.run(
        [sys.executable, "-m", "tornado_stm", "exec", "--threads", "4", str(script)],
        capture_output=True, text=True, timeout=240,
        env={**os.environ, "PYPYSTM": log_value})
    assert result.returncode == 0, result.stderr
    return script


def test_the_log_has_c8_records_with_pypy_markers(tmp_path: Path) -> None:
    log_path = tmp_path / "run.log"
    script = _run_logged(tmp_path, str(log_path))
    assert log_path.read_bytes().startswith(b"STMGC-C8-PROF01\n")
    events = list(LogReader(str(log_path), events="final").events())
    names = [event.name for event in events]
    assert names.count("STM_TRANSACTION_COMMIT") >= 400
    assert names.count("STM_TRANSACTION_START") == (names.count("STM_TRANSACTION_COMMIT")
                                                    + names.count("STM_TRANSACTION_ABORT"))
    inevitable = [e.marker for e in events if e.name == "STM_BECOME_INEVITABLE"]
    print_line = SCRIPT.splitlines().index('        print("checkpoint", i)') + 1
    assert f'File "{script}", line {print_line}, in work'.encode() in inevitable
    times = [event.time for event in events]
    assert times == sorted(times)
    if "STM_TRANSACTION_ABORT" in names:
        conflicts = {e.marker for e in events if e.name == "STM_CONTENTION_WRITE_READ"}
        write_line = SCRIPT.splitlines().index('    shared["n"] = value + 1') + 1
        assert conflicts <= {f'File "{script}", line {write_line}, in work'.encode()}
    waits = names.count("STM_WAIT_OTHER_INEVITABLE")
    assert names.count("STM_WAIT_DONE") == waits


def test_trailing_plus_is_accepted_and_logs_to_the_named_file(tmp_path: Path) -> None:
    log_path = tmp_path / "plus.log"
    _run_logged(tmp_path, f"{log_path}+")
    assert log_path.read_bytes().startswith(b"STMGC-C8-PROF01\n")


WAITING_SCRIPT = textwrap.dedent('''
    import time
    import transaction

    def work(i):
        print("task", i)
        time.sleep(0.01)

    for i in range(40):
        transaction.add(work, i)
    transaction.run()
''')


def test_waits_for_the_world_lock_are_charged_to_the_inevitable_line(tmp_path: Path) -> None:
    """Sections that turn inevitable at `print` queue for W behind each other:
    `stmlog report` must name that line as the cost, with the paused time."""
    import json

    log_path = tmp_path / "waiting.log"
    script = _run_logged(tmp_path, str(log_path), WAITING_SCRIPT)
    report = json.loads(subprocess.run(
        [sys.executable, "-m", "stmlog_tools", "report", str(log_path), "--json"],
        check=True, capture_output=True, text=True).stdout)
    print_line = WAITING_SCRIPT.splitlines().index('    print("task", i)') + 1
    marker = f'File "{script}", line {print_line}, in work'
    charged = [c for c in report["conflicts"]
               if c["event"] == "STM_BECOME_INEVITABLE" and marker in c["markers"]]
    assert charged, report["conflicts"]
    assert charged[0]["paused_time"] > 0
