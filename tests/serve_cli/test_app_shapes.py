"""Applications as people write them, served unchanged by a real ``tornado-stm serve``.

The factory runs on the server's loop (a PeriodicCallback it starts fires),
async factories and Tornado's ``main()`` shape work (its own ``listen`` is
honoured), ``tornado.options`` get the arguments after ``--``, autoreload
(``--reload`` or ``debug=True``) restarts the server when a module changes,
and instrumentation follows the application's handlers.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.serve_cli.helpers import (HERE, env, get, listening_urls, run_serve, start,
                                     wait_for)
from testsupport.serverproc import free_port


def json_get(url: str, path: str) -> dict:
    status, body = get(url, path)
    assert status == 200, body
    return json.loads(body)


def test_factory_runs_on_the_loop_so_its_periodic_callback_fires(tmp_path) -> None:
    served = start(str(tmp_path / "out"), "shapes_app:make_app", "--port", "0")
    try:
        # The callback ticks every 20 ms; a few ticks prove it is scheduled on the loop.
        wait_for(lambda: json_get(served.urls[0], "/ticks")["ticks"] >= 3, "ticks")
    finally:
        assert served.stop() == 0, served.output()


@pytest.mark.parametrize("target", ["shapes_app:make_app_async", "shapes_app:app"])
def test_async_factory_and_application_object(tmp_path, target) -> None:
    served = start(str(tmp_path / "out"), target, "--port", "0")
    try:
        assert json_get(served.urls[0], "/")["greeting"] == "hello"
    finally:
        assert served.stop() == 0, served.output()


def test_tornado_main_listens_by_itself_with_its_own_options(tmp_path) -> None:
    port = free_port()
    served = start(str(tmp_path / "out"), "shapes_app:main", "--",
                   f"--port={port}", "--greeting=bonjour")
    try:
        assert served.urls == [f"http://127.0.0.1:{port}/"]
        assert "(by the application itself)" in served.output()
        assert json_get(served.urls[0], "/")["greeting"] == "bonjour"
        # The handlers of the application main() built are found and instrumented.
        assert "handlers: 4 in shapes_app, all instrumented" in served.output()
    finally:
        assert served.stop() == 0, served.output()
    assert "stopped" in served.output()


@pytest.mark.parametrize("loop", ["per-thread", "shared"])
def test_every_thread_answers_on_the_sockets_main_listens_on(tmp_path, loop) -> None:
    """main() ran on one loop, but every loop accepts on its sockets: many
    concurrent requests that compute are answered by more than one thread.

    With one loop per thread, the thread is the loop's; with the shared loop,
    handlers run on its worker threads.
    """
    port = free_port()
    served = start(str(tmp_path / "out"), "shapes_app:main", "--threads", "4", "--loop", loop,
                   "--", f"--port={port}")
    names: set[str] = set()

    def answered_by_several_threads() -> bool:
        with ThreadPoolExecutor(16) as pool:
            names.update(pool.map(lambda _: json_get(served.urls[0], "/thread")["thread"],
                                  range(64)))
        return len(names) > 1
    try:
        wait_for(answered_by_several_threads, "a second thread to answer", interval=0)
    finally:
        assert served.stop() == 0, served.output()
    assert "stopped" in served.output()


def test_listening_options_are_ignored_with_a_warning_when_main_listens(tmp_path) -> None:
    port = free_port()
    served = start(str(tmp_path / "out"), "shapes_app:main", "--port", "1", "--",
                   f"--port={port}")
    try:
        assert served.port == port
        assert "listens by itself: --port ignored" in served.output()
    finally:
        assert served.stop() == 0, served.output()


def test_factory_parses_its_options_after_the_double_dash(tmp_path) -> None:
    served = start(str(tmp_path / "out"), "shapes_app:make_app_with_options", "--port", "0",
                   "--", "--greeting=hey")
    try:
        assert json_get(served.urls[0], "/")["greeting"] == "hey"
    finally:
        assert served.stop() == 0, served.output()


def test_application_help_and_bad_option() -> None:
    helped = run_serve("shapes_app:make_app_with_options", "--port", "0", "--", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "--greeting" in helped.stdout + helped.stderr
    bad = run_serve("shapes_app:make_app_with_options", "--port", "0", "--", "--nosuch=1")
    assert bad.returncode == 2
    # Tornado prints the app's help first, then serve says what went wrong.
    errors = [line for line in bad.stderr.splitlines() if line.startswith("tornado-stm")]
    assert len(errors) == 1 and "Unrecognized command line option" in errors[0], bad.stderr
    assert "Traceback" not in bad.stderr


def test_option_words_without_double_dash_are_refused() -> None:
    result = run_serve("shapes_app:make_app_with_options", "--greeting=hey")
    assert result.returncode == 2 and "unrecognized arguments: --greeting=hey" in result.stderr


RELOADABLE = '''
import tornado.web

class Handler(tornado.web.RequestHandler):
    def get(self):
        self.write("version {version}")

def make_app():
    return tornado.web.Application([(r"/", Handler)]{settings})
'''


@pytest.mark.parametrize("how", ["--reload", "debug=True", "--reload --fd", "--reload --port 0",
                                 "debug=True --port 0"])
def test_a_changed_module_restarts_the_server(tmp_path, how) -> None:
    """The re-executed server listens on the very socket the first one had: the
    inherited one with ``--fd``, the one it bound otherwise (``--port 0`` keeps
    its port)."""
    settings = ", debug=True" if how.startswith("debug=True") else ""
    app = tmp_path / "reloadable.py"
    app.write_text(RELOADABLE.format(version=1, settings=settings))
    port = 0 if how.endswith("--port 0") else free_port()
    options = ["--port", str(port)] + (["--reload"] if how.startswith("--reload") else [])
    listener = None
    if how == "--reload --fd":
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        options = ["--reload", "--fd", str(listener.fileno())]
    try:
        served = start(str(tmp_path / "out"), "reloadable:make_app", *options, cwd=str(tmp_path),
                       pass_fds=(listener.fileno(),) if listener else ())
    finally:
        if listener is not None:
            listener.close()       # the server has its own copy
    port = port or served.port
    assert served.urls == [f"http://127.0.0.1:{port}/"]
    pid = served.process.pid
    try:
        assert get(served.urls[0])[1] == b"version 1"
        app.write_text(RELOADABLE.format(version=2, settings=settings))
        base = os.stat(app).st_mtime
        bumps = iter(range(1, 10**6))

        def reloaded() -> bool:
            # Autoreload notes a file's first modification time on its first
            # scan, which may come after the write: a new time at every poll
            # is a change whichever scan comes first.
            os.utime(app, (base, base + next(bumps)))
            try:
                return get(served.urls[0], timeout=5)[1] == b"version 2"
            except OSError:  # between the old process and the new one
                return False
        wait_for(reloaded, "the new version to answer")
        assert served.process.pid == pid  # the same process, re-executed as Tornado does
        assert served.output().count("tornado-stm serve reloadable:make_app") == 2
        # Both banners name the same socket (also with --port 0: no new port).
        assert listening_urls(served.output()) == [f"http://127.0.0.1:{port}/"] * 2
    finally:
        assert served.stop() == 0, served.output()


def test_instrumentation_follows_the_handlers_not_the_module_name(tmp_path) -> None:
    split = os.path.join(HERE, "split")
    elsewhere = os.path.join(HERE, "elsewhere")
    served = start(str(tmp_path / "out"), "server:app", "--port", "0", cwd=split,
                   environment=env(PYTHONPATH=elsewhere))
    try:
        assert get(served.urls[0], "/sum/10") == (200, b'{"sum": 55}')
        output = served.output()
    finally:
        assert served.stop() == 0, served.output()
    # cpu holds the handlers server imports: instrumented, and said so.
    assert "): cpu, server" in output, output
    assert "handlers: 2 in cpu, outside" in output
    # outside comes from another directory: a warning names it and the fix.
    warning = [line for line in output.splitlines() if "not instrumented" in line]
    assert len(warning) == 1 and "'outside'" in warning[0], output
    assert "--instrument outside" in warning[0]
    # Tornado's own StaticFileHandler is framework code: no warning.
    assert "StaticFileHandler" not in output


def test_instrument_option_covers_a_handler_module(tmp_path) -> None:
    split = os.path.join(HERE, "split")
    elsewhere = os.path.join(HERE, "elsewhere")
    served = start(str(tmp_path / "out"), "server:app", "--port", "0",
                   "--instrument", "server", "--instrument", "cpu", "--instrument", "outside",
                   cwd=split, environment=env(PYTHONPATH=elsewhere))
    try:
        assert get(served.urls[0], "/outside") == (200, b"outside\n")
        output = served.output()
    finally:
        assert served.stop() == 0, served.output()
    assert "instrumented (--instrument server, cpu, outside): cpu, outside, server" in output
    assert "all instrumented" in output and "not instrumented" not in output


def test_sigint_stops_a_main_that_listens_by_itself(tmp_path) -> None:
    port = free_port()
    served = start(str(tmp_path / "out"), "shapes_app:main", "--", f"--port={port}")
    try:
        assert get(served.urls[0])[0] == 200
        served.process.send_signal(signal.SIGINT)
        assert served.process.wait(60) == 0
    finally:
        served.stop()
    assert "stopped" in served.output()


@pytest.mark.parametrize("loop", ["shared", "per-thread"])
def test_factory_and_main_on_either_loop(tmp_path, loop) -> None:
    served = start(str(tmp_path / "factory"), "shapes_app:make_app", "--port", "0",
                   "--loop", loop)
    try:
        wait_for(lambda: json_get(served.urls[0], "/ticks")["ticks"] >= 3, "ticks")
    finally:
        assert served.stop() == 0, served.output()
    port = free_port()
    served = start(str(tmp_path / "main"), "shapes_app:main", "--loop", loop, "--",
                   f"--port={port}")
    try:
        assert json_get(served.urls[0], "/")["greeting"] == "hello"
    finally:
        assert served.stop() == 0, served.output()
