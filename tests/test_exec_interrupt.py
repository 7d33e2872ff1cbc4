"""Ctrl-C and sys.exit() in ``tornado-stm exec`` with several threads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent('''
    import transaction

    def forever():
        while True:
            pass

    def short(i):
        return sum(range(50000))

    transaction.add(forever)
    for i in range(100000):
        transaction.add(short, i)
    print("running", flush=True)
    transaction.run()
    print("drained the whole queue", flush=True)
''')


def _default_sigint() -> None:
    # A test run from a background job inherits SIGINT ignored; a user's
    # terminal does not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("threads", ["2", "4"])
@pytest.mark.parametrize("kind", ["computing", "blocked"])
@pytest.mark.parametrize("receiver", ["process", "worker thread"])
def test_one_ctrl_c_stops_exec_promptly_with_130(tmp_path, threads, kind, receiver) -> None:
    """Also when the kernel hands the signal to a worker thread (kill(2) of its
    id does): the main thread, asleep in join(), used to never see it."""
    script = tmp_path / "endless.py"
    script.write_text(SCRIPT if kind == "computing" else STUCK)
    process = subprocess.Popen(
        [sys.executable, "-m", "tornado_stm", "exec", "--threads", threads, str(script)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": ROOT}, preexec_fn=_default_sigint)
    try:
        assert process.stdout.readline() == "running\n"
        time.sleep(1.0)  # transactions are running, one of them for ever
        interrupted = time.monotonic()
        if receiver == "process":
            process.send_signal(signal.SIGINT)
        else:
            workers = sorted(int(tid) for tid in os.listdir(f"/proc/{process.pid}/task")
                             if int(tid) != process.pid)
            os.kill(workers[-1], signal.SIGINT)
        stdout, stderr = process.communicate(timeout=15)
        elapsed = time.monotonic() - interrupted
    finally:
        process.kill()
        process.wait(5)
    assert process.returncode == 130, stderr
    assert elapsed < 5, f"exit took {elapsed:.1f}s after one Ctrl-C"
    assert "drained" not in stdout
    assert "\nKeyboardInterrupt\n" in stderr, stderr
    # A transaction computing in Python is interrupted; one blocked in C is
    # abandoned on its daemon thread, and the user is told.
    assert ("abandoned" in stderr) == (kind == "blocked"), stderr
    assert "Exception in thread" not in stderr


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("code,shown,status", [('"no input file given"', "no input file given", 1),
                                               ("3", None, 3), ("None", None, 0)])
def test_sys_exit_in_a_transaction_is_shown_as_python_shows_it(tmp_path, threads, code,
                                                               shown, status) -> None:
    script = tmp_path / "exits.py"
    script.write_text(textwrap.dedent(f'''
        import sys
        import transaction

        def check(i):
            if i == 3:
                sys.exit({code})

        for i in range(10):
            transaction.add(check, i)
        transaction.run()
        print("not reached")
    '''))
    result = subprocess.run(
        [sys.executable, "-m", "tornado_stm", "exec", "--threads", threads, str(script)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": ROOT})
    assert result.returncode == status, result.stderr
    assert "not reached" not in result.stdout
    assert result.stderr == (f"{shown}\n" if shown else ""), result.stderr


STUCK = textwrap.dedent('''
    import signal
    import time
    import transaction

    def stuck():
        # Blocked in C, and deaf to SIGINT: nothing can interrupt it.
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
        time.sleep(3600)

    def short(i):
        return sum(range(50000))

    transaction.add(stuck)
    for i in range(100000):
        transaction.add(short, i)
    print("running", flush=True)
    transaction.run()
''')
