"""The PYPYSTM log file: opened only by commands that run transactions, never
overwriting a user's file unless asked, and one line for a bad path."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.serve_faults.helpers import start

OLD = b"STMGC-C8-PROF01\n" + b"\x00" * 64  # somebody's earlier log

SCRIPT = textwrap.dedent('''
    import transaction
    box = {"n": 0}
    def work():
        box["n"] += 1
    for _ in range(20):
        transaction.add(work)
    transaction.run()
    print("done", box["n"])
''')


def tornado_stm(*arguments: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tornado_stm", *arguments], cwd=cwd,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)


def _script(tmp_path: Path) -> Path:
    script = tmp_path / "work.py"
    script.write_text(SCRIPT)
    return script


@pytest.mark.parametrize("arguments", [["--help"], ["info"], ["exec", "--help"],
                                       ["serve", "--help"]])
def test_commands_that_run_no_transaction_never_touch_the_log(tmp_path, arguments) -> None:
    log = tmp_path / "run.log"
    log.write_bytes(OLD)
    result = tornado_stm(*arguments, env={"PYPYSTM": str(log)}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert log.read_bytes() == OLD


@pytest.mark.parametrize("arguments", [["--help"], ["info"]])
@pytest.mark.parametrize("bad", ["missing/dir/run.log", "a_directory"])
def test_a_bad_log_path_never_breaks_help_or_info(tmp_path, arguments, bad) -> None:
    (tmp_path / "a_directory").mkdir()
    result = tornado_stm(*arguments, env={"PYPYSTM": str(tmp_path / bad)}, cwd=tmp_path)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr


@pytest.mark.parametrize("bad,problem", [("missing/dir/run.log", "no such directory"),
                                         ("a_directory", "is a directory"),
                                         ("read_only/run.log", "permission denied")])
def test_a_bad_log_path_is_one_line_and_exit_2(tmp_path, bad, problem) -> None:
    (tmp_path / "a_directory").mkdir()
    (tmp_path / "read_only").mkdir(mode=0o500)
    if problem == "permission denied" and os.geteuid() == 0:
        pytest.skip("root may write anywhere")
    path = str(tmp_path / bad)
    for arguments, env in [(["exec", str(_script(tmp_path))], {"PYPYSTM": path}),
                           (["exec", "--log", path, str(_script(tmp_path))], {}),
                           (["serve", "fault_app:make_app", "--log", path], {})]:
        result = tornado_stm(*arguments, env=env, cwd=Path(__file__).parent / "serve_faults")
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2, (arguments, result.stderr)
        assert len(lines) == 1 and path in lines[0] and problem in lines[0].lower(), lines


def test_exec_never_overwrites_an_existing_log(tmp_path) -> None:
    log = tmp_path / "run.log"
    log.write_bytes(OLD)
    result = tornado_stm("exec", str(_script(tmp_path)), env={"PYPYSTM": str(log)},
                         cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert log.read_bytes() == OLD
    numbered = tmp_path / "run.1.log"
    assert numbered.read_bytes().startswith(b"STMGC-C8-PROF01\n")
    assert os.path.getsize(numbered) > 16
    assert str(numbered) in result.stderr  # says where the log went
    # Again: the next free number.
    result = tornado_stm("exec", str(_script(tmp_path)), env={"PYPYSTM": str(log)},
                         cwd=tmp_path)
    assert result.returncode == 0 and str(tmp_path / "run.2.log") in result.stderr


def test_exec_log_force_overwrites(tmp_path) -> None:
    log = tmp_path / "run.log"
    log.write_bytes(OLD)
    result = tornado_stm("exec", "--log", str(log), "--force", str(_script(tmp_path)),
                         env={}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert log.read_bytes() != OLD and log.read_bytes().startswith(b"STMGC-C8-PROF01\n")
    assert str(log) in result.stderr
    assert not (tmp_path / "run.1.log").exists()


def test_serve_log_never_overwrites_an_existing_log(tmp_path) -> None:
    log = tmp_path / "serve.pypystm"
    log.write_bytes(OLD)
    server = start(str(tmp_path), "--threads", "2", "--log", str(log))
    try:
        assert server.stop() == 0
    finally:
        server.stop()
    assert log.read_bytes() == OLD
    numbered = tmp_path / "serve.1.pypystm"
    assert numbered.read_bytes().startswith(b"STMGC-C8-PROF01\n")
    assert str(numbered) in open(server.output_path).read()


def test_no_permission_is_named_in_one_line(tmp_path, monkeypatch) -> None:
    # Root may write anywhere: the refusal is simulated where the file is opened.
    from tornado_stm.stm import log

    def refuse(path, mode="r", *args, **kwargs):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(log, "open", refuse, raising=False)
    monkeypatch.setattr(log, "_configured", False)
    target = str(tmp_path / "run.log")
    with pytest.raises(log.LogPathError) as caught:
        log.configure(target)
    assert str(caught.value) == f"PYPYSTM log {target}: permission denied"
    assert log.current_path() is None
