"""``tornado-stm serve MODULE:ATTR``: serve an unchanged Tornado application on every core.

MODULE is imported with the current directory on ``sys.path`` (as uvicorn
and gunicorn do); ATTR is a ``tornado.web.Application`` or a function
returning one. The application runs on a
:class:`~tornado_stm.loop.TransactionalEventLoop`; with the STM engine
present, the application's modules are instrumented first so that its
handlers run as atomic sections.

On SIGINT or SIGTERM the server stops accepting connections, lets the
requests in flight finish (for at most ``--shutdown-timeout`` seconds),
closes idle connections, writes the PYPYSTM log out, and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import signal
import sys
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
                        help="write a PYPYSTM log to FILE (sets PYPYSTM)")
    parser.add_argument("--no-pipelining", dest="pipelining", action="store_false",
                        help="poll for I/O only when the whole batch of handlers has "
                        "finished (the 2014 design; for comparison)")
    parser.add_argument("--shutdown-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="on SIGINT/SIGTERM, wait at most this long for requests "
                        "in flight (default 10)")
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
    if args.log:
        _start_stm_log(args.log)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    mode = _prepare_instrumentation(args.backend, args.instrument or _default_patterns(module_name))
    app = load_application(module_name, attr)

    loop = new_event_loop(threads=threads, pipelining=args.pipelining)
    _print_banner(args, loop.threads, mode)
    try:
        loop.run_until_complete(_serve_until_signalled(app, args))
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
        _flush_stm_log()
    return 0


def _start_stm_log(path: str) -> None:
    """Write the PYPYSTM log to ``path``, as ``PYPYSTM=path`` would."""
    from tornado_stm.stm.log import open_log

    os.environ["PYPYSTM"] = path  # also for any child process, as PyPy-STM did
    # The engine opened its log from the environment when it was imported,
    # before the command line was read: open it again with PYPYSTM set.
    open_log()


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


def _print_banner(args: argparse.Namespace, threads: int, mode: str) -> None:
    host = f"[{args.address}]" if ":" in args.address else args.address
    print(f"tornado-stm serve {args.app}", flush=True)
    facts = interpreter_facts()
    print(f"  interpreter: {describe_interpreter(facts)}", flush=True)
    print(f"  threads: {threads}, pipelining {'on' if args.pipelining else 'off'}, "
          f"backend: {mode}", flush=True)
    print(f"  listening on http://{host}:{args.port}/", flush=True)
    if facts["gil_enabled"]:
        logger.warning("this interpreter runs with the GIL: handlers stay correct but "
                       "use one core at a time (run a free-threaded CPython, e.g. 3.13t, "
                       "for parallelism)")


async def _serve_until_signalled(app: Any, args: argparse.Namespace) -> None:
    import tornado.httpserver

    tracker = InFlightRequests(app)
    server = tornado.httpserver.HTTPServer(tracker)
    try:
        server.listen(args.port, address=args.address)
    except OSError as exc:
        raise ServeError(f"cannot listen on {args.address}:{args.port}: {exc.strerror or exc}") from None
    loop = asyncio.get_running_loop()
    stop_requested = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, _on_signal, signum, stop_requested)
    try:
        await stop_requested.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            # A second signal now stops at once, as usual.
            loop.remove_signal_handler(signum)
    server.stop()
    if not await tracker.wait_idle(args.shutdown_timeout):
        logger.warning("%d request(s) still in flight after %.1fs; closing their connections",
                       tracker.count, args.shutdown_timeout)
    try:
        await asyncio.wait_for(server.close_all_connections(), timeout=5)
    except asyncio.TimeoutError:
        logger.warning("some connections did not close within 5s")
    print("tornado-stm serve: stopped", flush=True)


def _on_signal(signum: int, stop_requested: asyncio.Event) -> None:
    if stop_requested.is_set():
        return
    print(f"tornado-stm serve: {signal.Signals(signum).name}: no new connections; "
          "finishing requests in flight", flush=True)
    stop_requested.set()


class InFlightRequests(tornado.httputil.HTTPServerConnectionDelegate):
    """An HTTP server delegate that counts the requests being answered.

    It sits between Tornado's HTTPServer and the Application: a request
    counts from its headers until its response is finished, its
    connection closes, or it is upgraded (a websocket is not waited for).
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.count = 0
        self._idle: Optional[asyncio.Event] = None

    # tornado.httputil.HTTPServerConnectionDelegate
    def start_request(self, server_conn: object, request_conn: Any) -> Any:
        return _TrackedMessage(self, server_conn, _TrackedConnection(self, request_conn))

    def on_close(self, server_conn: object) -> None:
        self.app.on_close(server_conn)

    def _finished_one(self) -> None:
        self.count -= 1
        if self.count == 0 and self._idle is not None:
            self._idle.set()

    async def wait_idle(self, timeout: float) -> bool:
        """Wait until no request is in flight; False if ``timeout`` passed first."""
        if self.count == 0:
            return True
        self._idle = asyncio.Event()
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False


class _TrackedConnection:
    """A request's connection (``HTTP1Connection``), reporting when the response is done."""

    def __init__(self, tracker: InFlightRequests, connection: Any) -> None:
        self._tracker = tracker
        self._connection = connection
        self._counted = False  # from the request's headers on
        self._done = False
        # The calls every response makes, bound once rather than forwarded.
        self.write_headers = connection.write_headers
        self.write = connection.write
        self.set_close_callback = connection.set_close_callback

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)

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
            self._tracker.count += 1

    def mark_done(self) -> None:
        if self._counted and not self._done:
            self._done = True
            self._tracker._finished_one()


class _TrackedMessage(tornado.httputil.HTTPMessageDelegate):
    """The application's message delegate, telling the connection when a request starts."""

    def __init__(self, tracker: InFlightRequests, server_conn: object,
                 connection: _TrackedConnection) -> None:
        self.connection = connection
        self.inner = tracker.app.start_request(server_conn, connection)

    def headers_received(self, start_line: Any, headers: Any) -> Any:
        # Not before: an idle keep-alive connection waits in start_request
        # for a next request that may never come.
        self.connection.mark_started()
        return self.inner.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Any:
        return self.inner.data_received(chunk)

    def finish(self) -> None:
        self.inner.finish()

    def on_connection_close(self) -> None:
        try:
            self.inner.on_connection_close()
        finally:
            self.connection.mark_done()


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m tornado_stm.serve``: the same as ``tornado-stm serve``."""
    from tornado_stm.cli import main as cli_main
    return cli_main(["serve", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
