"""Stopping ``tornado-stm serve`` with a handler still computing: the deadline holds.

Real server processes on loopback ports; every wait is bounded and every
process the test starts is killed by it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.serve_faults.helpers import HERE, env, get, read_response, send_get, start

THREADS = ["2", "4"]


def _output(server) -> str:
    with open(server.output_path, errors="replace") as stream:
        return stream.read()


def _wait_until_closing(server, timeout: float = 15.0) -> None:
    """Until the server says the signal arrived (it stops taking requests right
    after): a fixed pause was too short on a loaded machine."""
    deadline = time.monotonic() + timeout
    while "no new connections" not in _output(server):
        assert time.monotonic() < deadline, _output(server)
        time.sleep(0.05)
    time.sleep(0.2)


@pytest.mark.parametrize("threads", THREADS)
def test_the_shutdown_timeout_cuts_a_runaway_request(tmp_path, threads) -> None:
    server = start(str(tmp_path), "--threads", threads, "--shutdown-timeout", "2")
    try:
        idle = send_get(server.port, "/hello")  # a keep-alive connection, used before the signal
        assert read_response(idle).startswith(b"HTTP/1.1 200")
        runaway = send_get(server.port, "/runaway")
        time.sleep(0.5)  # the handler is computing now
        assert get(server.port, "/hello").startswith(b"HTTP/1.1 200")
        signalled = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        _wait_until_closing(server)
        # No new request is accepted after the signal: not on a new
        # connection, not on a kept-alive one.
        late = get(server.port, "/hello", timeout=5)
        assert not late.startswith(b"HTTP/1.1 200"), late[:100]
        try:
            idle.sendall(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            again = read_response(idle, timeout=5)
        except OSError:
            again = b""
        assert not again.startswith(b"HTTP/1.1 200"), again[:100]
        # The runaway request is answered 503 at the deadline, or its connection closed.
        answer = read_response(runaway, timeout=15)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 503"), answer[:100]
        status = server.process.wait(15)
        elapsed = time.monotonic() - signalled
        runaway.close()
        idle.close()
    finally:
        server.stop()
    output = _output(server)
    assert status not in (0, None), output
    assert elapsed < 2 + 5, f"exited {elapsed:.1f}s after the signal"
    cut = [line for line in output.splitlines() if "cut" in line]
    assert len(cut) == 1 and "1 request" in cut[0], output
    assert "Traceback" not in output


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("second", [signal.SIGTERM, signal.SIGINT])
def test_a_second_signal_stops_at_once(tmp_path, threads, second) -> None:
    server = start(str(tmp_path), "--threads", threads, "--shutdown-timeout", "60")
    try:
        runaway = send_get(server.port, "/runaway")
        time.sleep(0.5)
        server.process.send_signal(signal.SIGTERM)
        _wait_until_closing(server)
        assert server.process.poll() is None, "the first signal must let requests finish"
        stopping = time.monotonic()
        server.process.send_signal(second)
        status = server.process.wait(10)
        elapsed = time.monotonic() - stopping
        runaway.close()
    finally:
        server.stop()
    output = _output(server)
    assert status != 0, output
    assert elapsed < 3, f"the second signal took {elapsed:.1f}s"
    assert "1 request" in output and "Traceback" not in output


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("target", ["fault_app:make_app", "fault_app:main"])
def test_requests_that_finish_in_time_exit_0(tmp_path, threads, target) -> None:
    """Also when the application listens by itself (Tornado's ``main()``): its
    requests in flight used to be cut by the first signal."""
    server = start(str(tmp_path), "--threads", threads, "--shutdown-timeout", "20",
                   target=target)
    try:
        computing = send_get(server.port, "/compute/15")
        time.sleep(0.3)
        server.process.send_signal(signal.SIGTERM)
        _wait_until_closing(server)
        refused = get(server.port, "/hello", timeout=5)
        assert not refused.startswith(b"HTTP/1.1 200"), refused[:100]
        answer = read_response(computing, timeout=20)
        status = server.process.wait(20)
        computing.close()
    finally:
        server.stop()
    assert answer.startswith(b"HTTP/1.1 200") and b"computed True" in answer
    assert status == 0, _output(server)


def _other_threads(pid: int) -> list[int]:
    """The kernel ids of the process's threads other than the main one."""
    return sorted(int(tid) for tid in os.listdir(f"/proc/{pid}/task") if int(tid) != pid)


@pytest.mark.parametrize("threads", THREADS)
def test_a_signal_the_kernel_gives_a_loop_thread_stops_the_server(tmp_path, threads) -> None:
    """kill(2) of a thread's id hands the process-wide SIGTERM to that thread.

    The kernel does the same by itself when the main thread has a signal
    pending: with a Python-level handler the idle main thread, asleep in
    epoll_wait, never ran it and the server ignored SIGTERM (a CI run
    killed it after 30 s). The wakeup pipe takes the signal on any thread.
    """
    server = start(str(tmp_path), "--threads", threads)
    try:
        assert get(server.port, "/hello").startswith(b"HTTP/1.1 200")
        others = _other_threads(server.process.pid)
        assert len(others) >= int(threads) - 1
        os.kill(others[-1], signal.SIGTERM)
        status = server.process.wait(15)
    finally:
        server.stop()
    output = _output(server)
    assert status == 0, output
    assert "SIGTERM: no new connections" in output and "stopped" in output, output


def _start_slow_app(tmp_path) -> tuple[subprocess.Popen, str]:
    """serve of an app whose import takes seconds, once its import has begun."""
    output_path = str(tmp_path / "serve.out")
    with open(output_path, "wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "tornado_stm", "serve", "slow_start_app:make_app",
             "--port", "0", "--threads", "2"],
            cwd=HERE, env=dict(os.environ, **env()), stdout=output, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while "slow_start_app: loading" not in open(output_path, errors="replace").read():
        assert process.poll() is None and time.monotonic() < deadline, \
            open(output_path, errors="replace").read()
        time.sleep(0.05)
    return process, output_path


def _signalled_during_start_up(tmp_path, *signals: signal.Signals,
                               exit_within: float = 30) -> tuple[int, str]:
    """serve's exit status and output when ``signals`` come while the app is loading."""
    process, output_path = _start_slow_app(tmp_path)
    try:
        for index, signum in enumerate(signals):
            if index:
                time.sleep(0.3)
            process.send_signal(signum)
        status = process.wait(exit_within)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    return status, open(output_path, errors="replace").read()


def test_a_signal_during_start_up_is_a_graceful_stop(tmp_path) -> None:
    """It used to come before serve's handlers: the default action killed the process."""
    status, output = _signalled_during_start_up(tmp_path, signal.SIGTERM)
    assert status == 0, output
    assert "SIGTERM: no new connections" in output and "Traceback" not in output, output


def test_a_second_signal_during_start_up_stops_at_once(tmp_path) -> None:
    status, output = _signalled_during_start_up(tmp_path, signal.SIGTERM, signal.SIGINT,
                                                exit_within=10)
    assert status == 128 + signal.SIGINT, output
    assert "SIGINT again: stopped at once" in output, output
