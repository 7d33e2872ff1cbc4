"""``tornado-stm serve MODULE:ATTR``: serve an unchanged Tornado application on every core.

MODULE is imported with the current directory on ``sys.path`` (as uvicorn
and gunicorn do); ATTR is a ``tornado.web.Application`` or a function
returning one. The application runs on a
:class:`~tornado_stm.loop.TransactionalEventLoop`; with the STM engine
present, the application's modules are instrumented first so that its
handlers run as atomic sections.

On SIGINT or SIGTERM the server stops accepting connections and answers
503 to any request that arrives from then on, lets the requests in flight
finish, closes idle connections, writes the PYPYSTM log out, and exits 0.
Requests still running after ``--shutdown-timeout`` seconds are cut
(answered 503, or their connections closed) and the process exits 1 with
one line saying how many; a second signal does the same at once and exits
128 + the signal number (see :class:`Shutdown`).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import signal
import sys
import threading
import time
from typing import Any, Optional

import tornado.httputil

from tornado_stm.info import describe_interpreter, interpreter_facts

logger = logging.getLogger("tornado_stm.serve")

BACKENDS = ("stm", "serial", "pypystm")


class ServeError(Exception):
    """Bad input or environment; the message is the one line the user sees."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve a Tornado application on every core",
        description="Serve an unchanged Tornado application on every core, "
        "with handlers that appear to run alone.")
    parser.add_argument("app", metavar="MODULE:ATTR",
                        help="the application: ATTR is a tornado.web.Application "
                        "or a function returning one (MODULE is imported with "
                        "the current directory on sys.path)")
    parser.add_argument("--port", type=int, default=8888, help="TCP port (default 8888)")
    parser.add_argument("--address", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--threads", type=_positive_int, default=None,
                        help="threads that may run handlers at once "
                        "(default: one per core; 1 with --backend serial)")
    parser.add_argument("--backend", choices=BACKENDS, default="stm",
                        help="stm: our engine (default); serial: one thread, no "
                        "instrumentation, a reference run; pypystm: PyPy-STM's own")
    parser.add_argument("--instrument", metavar="PATTERN", action="append", default=None,
                        help="modules whose code runs in atomic sections (repeatable; "
                        "default: MODULE's top-level package and its submodules)")
    parser.add_argument("--log", metavar="FILE", default=None,
                        help="write a PYPYSTM log to FILE (default: $PYPYSTM; sets "
                        "PYPYSTM for child processes). An existing non-empty FILE is "
                        "kept and the log goes to FILE's first free numbered name "
                        "(run.log -> run.1.log) unless --force")
    parser.add_argument("--force", action="store_true",
                        help="let --log (or $PYPYSTM) overwrite an existing file")
    parser.add_argument("--no-pipelining", dest="pipelining", action="store_false",
                        help="poll for I/O only when the whole batch of handlers has "
                        "finished (the 2014 design; for comparison)")
    parser.add_argument("--shutdown-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="on SIGINT/SIGTERM, wait at most this long for requests "
                        "in flight (default 10); those still running then are "
                        "answered 503 or their connections closed, and the exit "
                        "status is 1. A second signal stops at once")
    parser.set_defaults(func=run)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def run(args: argparse.Namespace) -> int:
    try:
        return _serve(args)
    except ServeError as exc:
        print(f"tornado-stm serve: error: {exc}", file=sys.stderr)
        return 2


def _serve(args: argparse.Namespace) -> int:
    # Imported here so that `tornado-stm --help` stays quick.
    from tornado_stm.loop import new_event_loop

    module_name, attr = _split_target(args.app)
    threads = args.threads
    if args.backend == "serial":
        threads = 1
    elif args.backend == "pypystm":
        _require_pypystm()
    log_path = None
    if args.backend == "stm":
        log_path = _start_stm_log(args.log, args.force)
    elif args.log:
        logger.warning("--log %s: the %s backend runs no transactions of ours; no log is written",
                       args.log, args.backend)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    mode = _prepare_instrumentation(args.backend, args.instrument or _default_patterns(module_name))
    app = load_application(module_name, attr)

    loop = new_event_loop(threads=threads, pipelining=args.pipelining)
    shutdown = Shutdown(loop, InFlightRequests(app), args.shutdown_timeout)
    shutdown.install()
    _print_banner(args, loop.threads, mode, log_path)
    try:
        loop.run_until_complete(_serve_until_signalled(app, args, shutdown))
        if not shutdown.clean_exit():
            _wait_for_ever()  # the shutdown thread is cutting requests and ends the process
        print("tornado-stm serve: stopped", flush=True)
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
        _flush_stm_log()
    return 0


def _wait_for_ever() -> None:
    while True:
        time.sleep(3600)


def _start_stm_log(path: Optional[str], force: bool) -> Optional[str]:
    """Open the PYPYSTM log (``path``, else ``$PYPYSTM``); the file it goes to, or None."""
    from tornado_stm.stm.log import LogPathError, configure

    if path:
        os.environ["PYPYSTM"] = path  # also for any child process, as PyPy-STM did
    try:
        where = configure(path, force=force)
    except LogPathError as exc:
        raise ServeError(str(exc)) from None
    if where is None:
        return None
    requested, written = where
    if written != requested:
        logger.warning("PYPYSTM log %s exists and is not empty: writing the log to %s "
                       "(--force overwrites)", requested, written)
    return written


def _flush_stm_log() -> None:
    """Write the PYPYSTM log out, when the engine keeps one."""
    from tornado_stm.stm import flush_log

    flush_log()


def _split_target(target: str) -> tuple[str, str]:
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ServeError(f"{target!r} is not MODULE:ATTR (for example apps.demo:make_app)")
    return module_name, attr


def _require_pypystm() -> None:
    try:
        importlib.import_module("pypystm")
    except ImportError:
        raise ServeError("--backend pypystm needs PyPy-STM (its pypystm module); "
                         f"this is {describe_interpreter()}") from None


def _default_patterns(module_name: str) -> list[str]:
    """The app's top-level package and every module below it."""
    from tornado_stm.instrument import package_patterns
    return package_patterns(module_name.split(".")[0])


def _prepare_instrumentation(backend: str, patterns: list[str]) -> str:
    """Install the import hook before the app is imported; return a description."""
    if backend != "stm":
        return f"{backend} (no instrumentation)"
    from tornado_stm.instrument import install

    install(patterns)
    return "stm, instrumenting " + ", ".join(patterns)


def load_application(module_name: str, attr: str) -> Any:
    """Import MODULE and return the Application that ATTR is or makes."""
    import tornado.web

    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise ServeError(f"cannot import {module_name!r}: no module named {exc.name!r} "
                             f"(looked in {os.getcwd()} and sys.path)") from None
        raise ServeError(f"importing {module_name!r} failed: {_one_line(exc)}") from None
    except Exception as exc:
        raise ServeError(f"importing {module_name!r} failed: {_one_line(exc)}") from None
    try:
        target = getattr(module, attr)
    except AttributeError:
        raise ServeError(f"module {module_name!r} has no attribute {attr!r}") from None
    if isinstance(target, type) and not issubclass(target, tornado.web.Application):
        raise ServeError(f"{module_name}:{attr} is the class {target.__name__}, "
                         "not a tornado.web.Application or a function returning one")
    if callable(target) and not isinstance(target, tornado.web.Application):
        try:
            target = target()
        except Exception as exc:
            raise ServeError(f"{module_name}:{attr}() failed: {_one_line(exc)}") from None
    if not isinstance(target, tornado.web.Application):
        raise ServeError(f"{module_name}:{attr} is a {type(target).__name__}, "
                         "not a tornado.web.Application or a function returning one")
    return target


def _one_line(exc: BaseException) -> str:
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        where = f" ({tb.tb_frame.f_code.co_filename}, line {tb.tb_lineno})"
    return f"{type(exc).__name__}: {exc}{where}"


def _print_banner(args: argparse.Namespace, threads: int, mode: str,
                  log_path: Optional[str]) -> None:
    host = f"[{args.address}]" if ":" in args.address else args.address
    print(f"tornado-stm serve {args.app}", flush=True)
    facts = interpreter_facts()
    print(f"  interpreter: {describe_interpreter(facts)}", flush=True)
    print(f"  threads: {threads}, pipelining {'on' if args.pipelining else 'off'}, "
          f"backend: {mode}", flush=True)
    if log_path:
        print(f"  PYPYSTM log: {log_path}", flush=True)
    print(f"  listening on http://{host}:{args.port}/", flush=True)
    if facts["gil_enabled"]:
        logger.warning("this interpreter runs with the GIL: handlers stay correct but "
                       "use one core at a time (run a free-threaded CPython, e.g. 3.13t, "
                       "for parallelism)")


async def _serve_until_signalled(app: Any, args: argparse.Namespace,
                                 shutdown: "Shutdown") -> None:
    import tornado.httpserver

    server = tornado.httpserver.HTTPServer(shutdown.tracker)
    try:
        server.listen(args.port, address=args.address)
    except OSError as exc:
        raise ServeError(f"cannot listen on {args.address}:{args.port}: {exc.strerror or exc}") from None
    stop_requested = asyncio.Event()
    shutdown.begin_in_loop = stop_requested.set
    if shutdown.signalled.is_set():  # a signal came while the app was loading
        stop_requested.set()
    await stop_requested.wait()
    server.stop()
    # Requests in flight finish here; the Shutdown thread enforces the deadline.
    await shutdown.tracker.wait_idle()
    await server.close_all_connections()


class Shutdown:
    """How a server stops: the first SIGINT/SIGTERM is graceful, with a deadline;
    a second one stops at once.

    The signal handlers only record the signal: a thread of this class does
    the rest, so that neither a handler computing on the loop's thread nor
    a busy world lock can keep the process from stopping. On the first
    signal it marks the tracker closing (a request that arrives from then
    on is answered 503 and its connection closed) and asks the loop to stop
    listening and to wait for the requests in flight. If the loop has not
    finished ``timeout`` seconds later, or at a second signal, the requests
    still running are *cut*: answered 503 if they had not started their
    response, their connections closed otherwise; the PYPYSTM log is
    flushed, one line says how many were cut, and the process exits with
    status 1 (deadline) or 128 + the signal number (second signal).
    """

    #: How long a cut waits for a thread of the loop to answer the 503s.
    CUT_WAIT_SECONDS = 1.0

    def __init__(self, loop: Any, tracker: "InFlightRequests", timeout: float) -> None:
        self.loop = loop
        self.tracker = tracker
        self.timeout = timeout
        self.signals: list[int] = []
        self.signalled = threading.Event()
        self.begin_in_loop: Optional[Any] = None  # set by _serve_until_signalled
        # Whoever takes it decides how the process ends: the main thread
        # (a clean stop) or the shutdown thread (a cut).
        self.ending = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="tornado-stm-shutdown",
                                        daemon=True)

    def install(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._on_signal)
        self._thread.start()

    def _on_signal(self, signum: int, frame: Any) -> None:
        # Runs on the main thread wherever it is (even inside a section):
        # only record, never touch the loop or Tornado.
        self.signals.append(signum)
        self.signalled.set()

    def clean_exit(self) -> bool:
        """Called by the main thread when the loop has finished: True to go on."""
        return self.ending.acquire(blocking=False)

    def _run(self) -> None:
        self.signalled.wait()
        first = self.signals[0]
        name = signal.Signals(first).name
        print(f"tornado-stm serve: {name}: no new connections; finishing requests in flight "
              f"(at most {self.timeout:g}s; {name} again stops at once)", flush=True)
        self.tracker.closing = True
        self._call_in_loop(self._begin)
        deadline = time.monotonic() + self.timeout
        while True:
            if len(self.signals) > 1:
                again = signal.Signals(self.signals[1]).name
                return self._cut(f"{again} again: stopped at once", 128 + self.signals[1],
                                 wait=0.3)
            if time.monotonic() >= deadline:
                return self._cut(f"shutdown timeout of {self.timeout:g}s passed", 1,
                                 wait=self.CUT_WAIT_SECONDS)
            time.sleep(0.02)

    def _begin(self) -> None:
        if self.begin_in_loop is not None:
            self.begin_in_loop()

    def _call_in_loop(self, function: Any) -> Optional[threading.Event]:
        done = threading.Event()

        def call() -> None:
            try:
                function()
            finally:
                done.set()
        try:
            self.loop.call_soon_threadsafe(call)
        except RuntimeError:  # the loop is closed already
            return None
        return done

    def _cut(self, why: str, status: int, wait: float) -> None:
        if not self.ending.acquire(blocking=False):
            return  # the main thread is ending the process cleanly
        outcome: dict[str, int] = {}
        done = self._call_in_loop(lambda: outcome.update(self.tracker.cut_all()))
        # A loop thread answers the 503s, unless every one is busy (a
        # runaway handler holding the world lock): then exiting closes
        # the connections.
        if done is not None:
            done.wait(wait)
        cut = outcome.get("cut", self.tracker.count)
        answered = outcome.get("answered", 0)
        try:
            _flush_stm_log()
        except Exception as exc:  # the log is the user's: say it, but stop anyway
            print(f"tornado-stm serve: flushing the PYPYSTM log failed: {exc}", file=sys.stderr)
        how = (f"{answered} answered 503, {cut - answered} connection(s) closed"
               if outcome else "connection(s) closed")
        print(f"tornado-stm serve: {why}: {cut} request(s) still running cut ({how}); "
              f"exit status {status}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(status)


class InFlightRequests(tornado.httputil.HTTPServerConnectionDelegate):
    """An HTTP server delegate that counts the requests being answered.

    It sits between Tornado's HTTPServer and the Application: a request
    counts from its headers until its response is finished, its
    connection closes, or it is upgraded (a websocket is not waited for).
    Once ``closing`` is set (by the first signal), a request whose headers
    arrive is answered 503 without reaching the application, and its
    connection closed.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.in_flight: set["_TrackedConnection"] = set()
        self.closing = False
        self._idle: Optional[asyncio.Event] = None

    @property
    def count(self) -> int:
        return len(self.in_flight)

    # tornado.httputil.HTTPServerConnectionDelegate
    def start_request(self, server_conn: object, request_conn: Any) -> Any:
        return _TrackedMessage(self, server_conn, _TrackedConnection(self, request_conn))

    def on_close(self, server_conn: object) -> None:
        self.app.on_close(server_conn)

    def _finished_one(self, connection: "_TrackedConnection") -> None:
        self.in_flight.discard(connection)
        if not self.in_flight and self._idle is not None:
            self._idle.set()

    async def wait_idle(self) -> None:
        """Wait until no request is in flight."""
        if self.in_flight:
            self._idle = asyncio.Event()
            await self._idle.wait()

    def cut_all(self) -> dict[str, int]:
        """Under W: answer 503 to every request in flight that has not started
        its response, close the connections of the others."""
        cut = answered = 0
        for connection in list(self.in_flight):
            cut += 1
            if connection.respond_unavailable():
                answered += 1
            else:
                connection.close_stream()
        return {"cut": cut, "answered": answered}


_UNAVAILABLE_BODY = b"503: Service Unavailable (the server is stopping)\n"


class _TrackedConnection:
    """A request's connection (``HTTP1Connection``), reporting when the response is done."""

    def __init__(self, tracker: InFlightRequests, connection: Any) -> None:
        self._tracker = tracker
        self._connection = connection
        self._counted = False  # from the request's headers on
        self._done = False
        self._responding = False  # the response's headers are written
        # The calls every response makes, bound once rather than forwarded.
        self.write = connection.write
        self.set_close_callback = connection.set_close_callback

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)

    def write_headers(self, start_line: Any, headers: Any, chunk: Optional[bytes] = None) -> Any:
        self._responding = True
        return self._connection.write_headers(start_line, headers, chunk)

    def finish(self) -> None:
        try:
            self._connection.finish()
        finally:
            self.mark_done()

    def detach(self) -> Any:
        self.mark_done()
        return self._connection.detach()

    def mark_started(self) -> None:
        if not self._counted:
            self._counted = True
            self._tracker.in_flight.add(self)

    def mark_done(self) -> None:
        if self._counted and not self._done:
            self._done = True
            self._tracker._finished_one(self)

    def respond_unavailable(self) -> bool:
        """Answer 503 and close, if no response was started; False otherwise."""
        if self._responding or self._done:
            return False
        self._responding = True
        try:
            headers = tornado.httputil.HTTPHeaders({
                "Content-Type": "text/plain; charset=UTF-8",
                "Content-Length": str(len(_UNAVAILABLE_BODY)),
                "Connection": "close"})
            self._connection.write_headers(
                tornado.httputil.ResponseStartLine("HTTP/1.1", 503, "Service Unavailable"),
                headers, _UNAVAILABLE_BODY)
            self._connection.finish()
        except Exception:  # the stream is gone: closing it is all that is left
            self.close_stream()
            return False
        finally:
            self.mark_done()
        self.close_stream()
        return True

    def close_stream(self) -> None:
        stream = getattr(self._connection, "stream", None)
        if stream is not None:
            stream.close()
        self.mark_done()


class _TrackedMessage(tornado.httputil.HTTPMessageDelegate):
    """The application's message delegate, telling the connection when a request starts."""

    def __init__(self, tracker: InFlightRequests, server_conn: object,
                 connection: _TrackedConnection) -> None:
        self.tracker = tracker
        self.connection = connection
        self.inner = tracker.app.start_request(server_conn, connection)
        self.refused = False

    def headers_received(self, start_line: Any, headers: Any) -> Any:
        if self.tracker.closing:
            # The server is stopping: no new request reaches the application.
            self.refused = True
            self.connection.respond_unavailable()
            return None
        # Not before: an idle keep-alive connection waits in start_request
        # for a next request that may never come.
        self.connection.mark_started()
        return self.inner.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Any:
        if self.refused:
            return None
        return self.inner.data_received(chunk)

    def finish(self) -> None:
        if not self.refused:
            self.inner.finish()

    def on_connection_close(self) -> None:
        try:
            if not self.refused:
                self.inner.on_connection_close()
        finally:
            self.connection.mark_done()


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m tornado_stm.serve``: the same as ``tornado-stm serve``."""
    from tornado_stm.cli import main as cli_main
    return cli_main(["serve", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
