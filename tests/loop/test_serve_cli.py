"""``tornado-stm serve`` as a command: its banner, its errors, its graceful stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest

from tests.conftest import FREE_THREADED
from tests.loop.servers import HERE, _env, serve_command, start_stm_server
from testsupport.serverproc import free_port


def run_serve(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tornado_stm", "serve", *arguments],
                          cwd=HERE, env=dict(os.environ, **_env()), capture_output=True,
                          text=True, timeout=120)


def test_help_names_every_option() -> None:
    result = run_serve("--help")
    assert result.returncode == 0
    for option in ("--port", "--address", "--threads", "--backend", "--instrument", "--log",
                   "--no-pipelining", "--shutdown-timeout", "MODULE:ATTR"):
        assert option in result.stdout


@pytest.mark.parametrize("arguments,message", [
    (["e2e_app"], "'e2e_app' is not MODULE:ATTR"),
    (["no_such_module:app"], "cannot import 'no_such_module'"),
    (["e2e_app:no_such_attr"], "module 'e2e_app' has no attribute 'no_such_attr'"),
    (["e2e_app:STATIC_PATH"], "is a str, not a tornado.web.Application"),
    (["e2e_app:HelloHandler"], "is the class HelloHandler, not a tornado.web.Application"),
    (["e2e_app:count_primes"], "e2e_app:count_primes() failed: TypeError"),
    (["e2e_app:make_app", "--backend", "pypystm"], "--backend pypystm needs PyPy-STM"),
])
def test_bad_input_gives_one_clear_line(arguments, message) -> None:
    result = run_serve(*arguments, "--port", str(free_port()))
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("bad", ["0", "-3", "two"])
def test_threads_must_be_a_positive_number(bad) -> None:
    result = run_serve("e2e_app:make_app", "--threads", bad)
    assert result.returncode == 2 and "--threads" in result.stderr
    assert "Traceback" not in result.stderr


def test_port_in_use_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = run_serve("e2e_app:make_app", "--port", str(taken.getsockname()[1]))
    assert result.returncode == 2
    assert "cannot listen on 127.0.0.1:" in result.stderr and "Traceback" not in result.stderr


def test_banner_tells_interpreter_threads_and_url(tmp_path) -> None:
    server = start_stm_server("e2e_app:make_app", str(tmp_path), "--threads", "3",
                              "--no-pipelining", probe="/hello")
    try:
        assert server.stop() == 0
        output = open(server.output_path).read()
    finally:
        server.stop()
    assert f"listening on http://127.0.0.1:{server.port}/" in output
    assert "threads: 3, shared loop, pipelining off" in output
    assert "interpreter: CPython" in output
    gil_warning = "runs with the GIL" in output
    assert gil_warning == (not FREE_THREADED)


def test_serial_backend_runs_one_thread(tmp_path) -> None:
    server = start_stm_server("e2e_app:make_app", str(tmp_path), "--backend", "serial",
                              "--threads", "4", probe="/hello")
    try:
        assert server.stop() == 0
    finally:
        server.stop()
    assert "threads: 1" in open(server.output_path).read()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_finishes_the_request_in_flight_then_exits_0(tmp_path, signum) -> None:
    server = start_stm_server("e2e_app:make_app", str(tmp_path), probe="/hello")
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as client:
            client.sendall(b"GET /drip/10 HTTP/1.1\r\nHost: test\r\n\r\n")
            answer = b""
            while b"start\n" not in answer:  # the request is in flight now
                answer += client.recv(4096)
            server.process.send_signal(signum)
            while True:
                data = client.recv(4096)
                if not data:
                    break
                answer += data
                if answer.endswith(b"0\r\n\r\n"):  # the last chunk
                    break
        assert answer.startswith(b"HTTP/1.1 200 OK")
        assert b"end\n" in answer
        assert server.process.wait(60) == 0
        # Stopped means stopped: nothing listens any more.
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", server.port), timeout=5).close()
    finally:
        server.stop()
    output = open(server.output_path).read()
    assert "finishing requests in flight" in output and "stopped" in output


def test_log_option_writes_a_pypystm_log(tmp_path) -> None:
    log_path = tmp_path / "serve.pypystm"
    server = start_stm_server("booking_app:make_app", str(tmp_path), "--log", str(log_path),
                              probe="/state")
    try:
        subprocess.run(["curl", "-s", "-d", "holder=x", f"{server.url}/book"],
                       timeout=60, check=True, capture_output=True)
        assert server.stop() == 0
    finally:
        server.stop()
    output = open(server.output_path).read()
    if "world lock only" in output:
        pytest.skip("this build has no STM engine to write a log")
    with open(log_path, "rb") as log:
        assert log.read(16) == b"STMGC-C8-PROF01\n"
    assert os.path.getsize(log_path) > 16, "no records in the log"


@pytest.mark.parametrize("loop", ["per-thread", "shared"])
def test_a_generator_open_at_the_stop_closes_quietly(tmp_path, loop) -> None:
    # Closing it at the interpreter's shutdown ran the engine's first look at
    # what resumes a step (section.codes_resuming_locally), whose imports
    # failed then: "Exception ignored ... ImportError: sys.meta_path is None"
    # (red-team round 42). The table is made when the engine starts now.
    server = start_stm_server("idsource_app:make_app", str(tmp_path), "--threads", "2",
                              "--loop", loop, probe="/id")
    try:
        assert server.stop() == 0
    finally:
        server.stop()
    output = open(server.output_path).read()
    assert "Exception ignored" not in output and "Error" not in output, output[-2000:]
