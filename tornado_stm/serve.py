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
import gc
import importlib
import logging
import os
import select
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

import tornado.httputil

from tornado_stm import binding, config
from tornado_stm.info import describe_interpreter, interpreter_facts
from tornado_stm.transaction import BACKENDS

logger = logging.getLogger("tornado_stm.serve")

LOOP_MODES = ("per-thread", "shared")


class ServeError(Exception):
    """Bad input or environment; the message is the one line the user sees."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve a Tornado application on every core",
        description="Serve an unchanged Tornado application on every core, "
        "with handlers that appear to run alone.\n\nThe arguments after -- are the "
        "application's: it sees them in sys.argv[1:] (tornado.options.parse_command_line() "
        "reads them).")
    parser.add_argument("app", metavar="MODULE:ATTR",
                        help="the application: ATTR is a tornado.web.Application, "
                        "a function returning one (plain or async; it runs on the "
                        "server's loop), or an async main() that listens by itself "
                        "(MODULE is imported with the current directory on sys.path)")
    _add_listening_options(parser)
    parser.add_argument("--threads", type=_positive_int, default=None,
                        help="threads that may run handlers at once "
                        "(default: one per core; 1 with --backend serial)")
    parser.add_argument("--backend", choices=BACKENDS, default="stm",
                        help="stm: our engine (default); serial: one thread, no "
                        "instrumentation, a reference run; pypystm: PyPy-STM's own")
    parser.add_argument("--instrument", metavar="PATTERN", action="append", default=None,
                        help="modules whose code runs in atomic sections (repeatable; "
                        "default: MODULE's top-level package and every module loaded from "
                        "the directory MODULE is found in, except installed packages)")
    parser.add_argument("--log", metavar="FILE", default=None,
                        help="write a PYPYSTM log to FILE (default: $PYPYSTM; sets "
                        "PYPYSTM for child processes). An existing non-empty FILE is "
                        "kept and the log goes to FILE's first free numbered name "
                        "(run.log -> run.1.log) unless --force")
    parser.add_argument("--force", action="store_true",
                        help="let --log (or $PYPYSTM) overwrite an existing file")
    parser.add_argument("--loop", choices=LOOP_MODES, default=None,
                        help="per-thread (default): one event loop per thread, each "
                        "accepting on the port, framework code on every core; shared: "
                        "one loop whose framework code runs under the world lock, only "
                        "handler bodies in parallel (the 2014 design, for comparison)")
    parser.add_argument("--no-pipelining", dest="pipelining", action="store_false",
                        help="with --loop shared (implied): poll for I/O only when the "
                        "whole batch of handlers has finished (the 2014 design)")
    parser.add_argument("--shutdown-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="on SIGINT/SIGTERM, wait at most this long for requests "
                        "in flight (default 10); those still running then are "
                        "answered 503 or their connections closed, and the exit "
                        "status is 1. A second signal stops at once")
    parser.add_argument("--reload", action="store_true",
                        help="restart when a module of the process changes (Tornado's "
                        "autoreload, as debug=True does; for development)")
    parser.add_argument("--log-level", type=config.log_level, default="info",
                        metavar="LEVEL", help="critical, error, warning, info (default) or "
                        "debug; in Tornado's usual format. An application that parses "
                        "tornado.options gets it as its --logging default; its own "
                        "'-- --logging=LEVEL' wins")
    parser.add_argument("--access-log", action=argparse.BooleanOptionalAction, default=True,
                        help="a line per request, as Tornado logs them (default on); "
                        "without, only 4xx and 5xx answers are logged")
    config.use_environment(parser, config.SERVE_ENVIRONMENT)
    # What follows `--` is the application's own command line (cli.main splits it off).
    parser.usage = "%(prog)s [OPTIONS] MODULE:ATTR [-- APP_ARGS...]"
    parser.set_defaults(func=run, app_args=[])


def _add_listening_options(parser: argparse.ArgumentParser) -> None:
    """Where to listen, TLS and proxies (tornado_stm.binding does the work)."""
    group = parser.add_argument_group("listening")
    group.add_argument("--host", "--address", dest="host", action="append",
                       type=binding.host_name, default=None, metavar="HOST",
                       help="address or name to listen on, IPv4 or IPv6 (repeatable; "
                       "default 127.0.0.1 unless --bind or --fd is given; '' or 0.0.0.0 "
                       "and :: for every interface)")
    group.add_argument("--port", type=binding.port_number, default=8888,
                       help="TCP port for --host, 0 to 65535 (default 8888; 0: a free port, "
                       "printed once bound)")
    group.add_argument("--bind", action="append", type=binding.bind_spec, default=None,
                       metavar="ADDRESS", help="HOST:PORT, [IPV6]:PORT, HOST (with --port), "
                       "unix:PATH or fd://N (repeatable)")
    group.add_argument("--fd", action="append", type=binding.fd_number, default=None,
                       metavar="N", help="listen on the inherited socket N (systemd, a "
                       "supervisor; repeatable)")
    group.add_argument("--certfile", default=None, metavar="FILE",
                       help="serve HTTPS with this PEM certificate (chain)")
    group.add_argument("--keyfile", default=None, metavar="FILE",
                       help="the certificate's private key (default: in --certfile)")
    group.add_argument("--proxy-headers", action="store_true",
                       help="trust X-Forwarded-For/X-Real-Ip and X-Forwarded-Proto/X-Scheme "
                       "from --forwarded-allow-ips peers (Tornado's xheaders)")
    group.add_argument("--forwarded-allow-ips", type=binding.trusted_peers,
                       default=binding.DEFAULT_FORWARDED_ALLOW_IPS, metavar="IPS",
                       help="comma-separated addresses or networks whose proxy headers are "
                       "trusted, or * (default 127.0.0.1,::1; Unix-socket peers always); "
                       "implies --proxy-headers")


def _positive_int(text: str) -> int:
    value = binding.whole_number(text, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def run(args: argparse.Namespace) -> int:
    from tornado_stm import appload

    try:
        given = config.resolve(args)
        config.configure_logging("debug" if args.verbose and "log_level" not in given
                                 else args.log_level, args.access_log,
                                 for_tornado_options="log_level" in given)
        return _serve(args, given)
    except (ServeError, config.ConfigError, binding.BindError, appload.LoadError) as exc:
        print(f"tornado-stm serve: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before the server's own signal handling is installed
        print("tornado-stm serve: interrupted while starting", file=sys.stderr)
        return 130




@dataclass
class _Plan:
    """What the options decided before any loop exists."""

    target: Any                      # what MODULE:ATTR names
    instrumented: str                # how modules are selected, for the banner
    log_path: Optional[str]
    given: set[str]                  # options set on the command line or by the environment
    wanted: list[binding.Endpoint]
    ssl_context: Any
    trusted: Optional[binding.TrustedPeers]


def _serve(args: argparse.Namespace, given: set[str]) -> int:
    from tornado_stm import appload

    module_name, attr = _split_target(args.app)
    threads = args.threads
    if args.backend == "serial":
        threads = 1
    elif args.backend == "pypystm":
        _require_pypystm()
    loop_mode = _loop_mode(args)
    # Checked before the application runs: a typo costs no start-up.
    ssl_context = binding.tls_context(args.certfile, args.keyfile)
    trusted = (args.forwarded_allow_ips
               if args.proxy_headers or "forwarded_allow_ips" in given else None)
    # A reload re-executes this command line: it listens on the sockets the
    # process before it bound (binding.keep_on_reload), not on new ones.
    wanted = binding.reloaded_endpoints() or binding.endpoints(args.host, args.bind, args.fd)
    log_path = None
    if args.backend == "stm":
        log_path = _start_stm_log(args.log, args.force)
    elif args.log:
        logger.warning("--log %s: the %s backend runs no transactions of ours; no log is written",
                       args.log, args.backend)
    # From here on a signal is a shutdown, also while the application loads.
    shutdown = Shutdown(args.shutdown_timeout)
    shutdown.install()
    try:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        appload.give_application_argv(appload.script_name(module_name), args.app_args)
        how = _prepare_instrumentation(args.backend, args.instrument, module_name)
        plan = _Plan(appload.import_target(module_name, attr), how, log_path, given, wanted,
                     ssl_context, trusted)
        if threads is None:
            from tornado_stm.loop import default_thread_count
            threads = default_thread_count()
        if loop_mode == "shared":
            return _serve_shared_loop(plan, args, threads, shutdown)
        return _serve_loop_per_thread(plan, args, threads, shutdown)
    finally:
        shutdown.uninstall()
        _flush_stm_log()


def _settle_the_heap() -> None:
    """Hide what start-up made (modules, the application, the engine) from the collector.

    The cyclic collector of free-threaded CPython 3.13 is not generational:
    each collection visits every object, and a request's allocations start
    one every few requests. Objects frozen by ``gc.freeze()`` are left out of
    those visits (the practice of forking servers, for the same reason);
    they are never collected, so only what start-up leaves live is frozen.
    A hello request costs about 20 us less (docs/benchmarks.md).
    """
    gc.collect()
    gc.freeze()


def _loop_mode(args: argparse.Namespace) -> str:
    """--loop, with --no-pipelining implying the shared loop it is a knob of."""
    if args.loop is None:
        return "per-thread" if args.pipelining else "shared"
    if args.loop == "per-thread" and not args.pipelining:
        raise ServeError("--no-pipelining is a setting of --loop shared, not of --loop per-thread")
    return args.loop


def _serve_shared_loop(plan: _Plan, args: argparse.Namespace, threads: int,
                       shutdown: "Shutdown") -> int:
    """One TransactionalEventLoop: framework code under W, handler bodies on every core."""
    from tornado_stm import appload
    from tornado_stm.loop import new_event_loop

    loop = new_event_loop(threads=threads, pipelining=args.pipelining)
    try:
        # The factory (or main) runs on the loop: what it starts there runs.
        started = loop.run_until_complete(appload.start_target(plan.target, args.app,
                                                                args.reload))
        if started.exit_status is not None:
            return started.exit_status
        listeners = _listen(started, args, plan, 1)
        serving = Serving(loop, InFlightRequests(started.app))
        _settle_the_heap()
        shutdown.serve([serving])
        _print_banner(args, loop.threads, "shared loop, pipelining "
                      + ("on" if args.pipelining else "off"), plan, started, listeners)
        loop.run_until_complete(_serve_until_signalled(listeners, 0, serving, shutdown, started))
        if not shutdown.clean_exit():
            _wait_for_ever()  # the shutdown thread is cutting requests and ends the process
        _stopped(plan, started)
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
    return started.status


def _serve_loop_per_thread(plan: _Plan, args: argparse.Namespace, threads: int,
                           shutdown: "Shutdown") -> int:
    """One event loop per thread, each accepting connections (tornado_stm.loop.perthread).

    The factory (or main) runs on loop 0, on this thread, before the others
    start; a main() that listens by itself keeps running there, and every
    loop accepts on its sockets (binding.take_over).
    """
    import asyncio as _asyncio

    from tornado_stm import appload
    from tornado_stm.loop.perthread import LoopThreads

    loops = LoopThreads(threads)
    try:
        _asyncio.set_event_loop(loops.loops[0])
        started = loops.loops[0].run_until_complete(
            appload.start_target(plan.target, args.app, args.reload))
        if started.exit_status is not None:
            return started.exit_status
        listeners = _listen(started, args, plan, threads)
        servings = [Serving(loop, InFlightRequests(started.app)) for loop in loops.loops]
        _settle_the_heap()
        shutdown.serve(servings)
        _print_banner(args, threads, "one event loop per thread", plan, started, listeners)

        def serve_one(index: int, loop: Any) -> Any:
            # Loop 0 ran the target: a main() still running is its to watch.
            return _serve_until_signalled(listeners, index, servings[index], shutdown,
                                          started if index == 0 else None)
        loops.run(serve_one)
        if not shutdown.clean_exit():
            _wait_for_ever()
        _stopped(plan, started)
    finally:
        loops.close()
    return started.status


#: Options that say where serve listens: ignored when the application listens itself.
_LISTENING_OPTIONS = {"host", "port", "bind", "fd", "certfile", "keyfile", "proxy_headers",
                      "forwarded_allow_ips"}


def _listen(started: Any, args: argparse.Namespace, plan: _Plan,
            loops: int) -> list[binding.Listeners]:
    """Bind what the options ask for (one socket set per loop), or, when the
    application listens by itself, take its own sockets for every loop."""
    if started.listens_itself:
        ignored = sorted(plan.given & _LISTENING_OPTIONS)
        if ignored:
            logger.warning("%s listens by itself: %s ignored", args.app,
                           ", ".join("--" + name.replace("_", "-") for name in ignored))
        taken = (binding.take_over(server, loops) for server in started.own_servers)
        return [listeners for listeners in taken if listeners is not None]
    per_loop = binding.bind_per_loop(plan.wanted, args.port, loops)
    # Also debug=True's autoreload re-executes the process: the port must stay.
    binding.keep_on_reload(plan.wanted, per_loop[0])
    return [binding.Listeners(per_loop[0], plan.ssl_context, plan.trusted, per_loop=per_loop)]


def _stopped(plan: _Plan, started: Any) -> None:
    """A clean stop: serve's Unix socket files go (an application's own are its business)."""
    if not started.listens_itself:
        binding.remove_socket_files(plan.wanted)
    print("tornado-stm serve: stopped", flush=True)


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


def _prepare_instrumentation(backend: str, patterns: Optional[list[str]],
                             module_name: str) -> str:
    """Install the import hook before the app is imported; say what it selects."""
    if backend != "stm":
        return f"{backend} (no instrumentation)"
    from tornado_stm import appload, stm
    from tornado_stm.instrument import package_patterns

    stm.start()
    if patterns:
        appload.install_finder(patterns, None)
        return "--instrument " + ", ".join(patterns)
    package = module_name.split(".")[0]
    root = appload.project_root(module_name)
    appload.install_finder(package_patterns(package), root)
    return f"{package} and the modules under {root}" if root else f"the {package} package"


def _print_banner(args: argparse.Namespace, threads: int, loop: str, plan: _Plan,
                  started: Any, listeners: list[binding.Listeners]) -> None:
    from tornado_stm import appload

    report = appload.instrumentation_report(started.apps, args.backend, plan.instrumented)
    print(f"tornado-stm serve {args.app}", flush=True)
    facts = interpreter_facts()
    print(f"  interpreter: {describe_interpreter(facts)}", flush=True)
    print(f"  threads: {threads}, {loop}, backend: {args.backend}", flush=True)
    for line in report.lines:
        print(f"  {line}", flush=True)
    if plan.log_path:
        print(f"  PYPYSTM log: {plan.log_path}", flush=True)
    if started.listens_itself:
        for url in started.own_urls:
            print(f"  listening on {url} (by the application itself)", flush=True)
    else:
        for url in listeners[0].urls():
            print(f"  listening on {url}", flush=True)
    for warning in report.warnings:
        logger.warning("%s", warning)
    if facts["gil_enabled"]:
        logger.warning("this interpreter runs with the GIL: handlers stay correct but "
                       "use one core at a time (run a free-threaded CPython, e.g. 3.13t, "
                       "for parallelism)")


async def _serve_until_signalled(listeners: list[binding.Listeners], index: int,
                                 serving: "Serving", shutdown: "Shutdown",
                                 started: Optional[Any] = None) -> None:
    """Serve loop ``index``'s sockets on the running loop until the shutdown begins, then drain.

    ``started`` is given to the loop that ran the target: a main() still
    running (it listens by itself) is watched too. On the first signal the
    servers stop listening, the requests in flight finish (``serving.tracker``
    counts them, so the deadline and a second signal cut them), and then the
    main() task is cancelled, as ``asyncio.run`` does on Ctrl-C, and its
    ``finally`` blocks run. A main() that returns stops every loop; one
    that fails sets ``started.status`` to 1.
    """
    # The sockets are bound already (before the banner): the servers take them.
    servers = [group.start_server(_delegate(serving.tracker, group), index)
               for group in listeners]
    stop_requested = asyncio.Event()
    serving.begin = stop_requested.set
    if shutdown.signalled.is_set():  # a signal came while the app was loading
        stop_requested.set()
    stopper = asyncio.ensure_future(stop_requested.wait())
    task = started.task if started is not None else None
    done, _ = await asyncio.wait({stopper} | ({task} if task is not None else set()),
                                 return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()
    for server in servers:
        server.stop()
    if task is not None and task in done:
        _main_ended(task, started, serving, shutdown)
        return
    # Requests in flight finish here; the Shutdown thread enforces the deadline.
    await serving.tracker.wait_idle()
    for server in servers:
        await server.close_all_connections()
    if task is not None:
        task.cancel()
        await asyncio.wait({task})


def _delegate(tracker: "InFlightRequests", listeners: binding.Listeners) -> Any:
    """What a loop's server answers with: serve's application, or, on sockets taken
    from the application's own server, that server's application; counted by ``tracker``."""
    if listeners.like is None:
        return tracker
    return tracker.counting(listeners.like.request_callback)


def _main_ended(task: asyncio.Future, started: Any, serving: "Serving",
                shutdown: "Shutdown") -> None:
    """The application's main() returned or failed by itself: the other loops stop too."""
    from tornado_stm import appload

    exc = None if task.cancelled() else task.exception()
    if exc is not None:
        logger.error("the application's main() failed: %s", appload.one_line(exc))
        started.status = 1
    else:
        print("tornado-stm serve: the application's main() returned", flush=True)
    for other in shutdown.servings:
        if other is not serving:
            other.call(lambda other=other: other.begin and other.begin())


class Serving:
    """One event loop's share of a server: the loop, its requests in flight, its stop."""

    def __init__(self, loop: Any, tracker: "InFlightRequests") -> None:
        self.loop = loop
        self.tracker = tracker
        self.begin: Optional[Any] = None    # set by _serve_until_signalled

    def call(self, function: Any) -> Optional[threading.Event]:
        """Run ``function()`` on this loop; an Event set when it has run (None if closed)."""
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


class _Uninstalled(Exception):
    """Shutdown.uninstall ended the shutdown thread."""


def _signal_goes_through_the_pipe(signum: int, frame: Any) -> None:
    """The Python-level handler of a served process: Shutdown reads the wakeup pipe instead."""


class Shutdown:
    """How a server stops: the first SIGINT/SIGTERM is graceful, with a deadline;
    a second one stops at once.

    The kernel hands a process-wide signal to any thread that does not block
    it, often a loop thread while the main thread sleeps in ``epoll_wait``
    or on a lock: a Python-level handler would then run only when the main
    thread next wakes, which on an idle server is never. So the signals are
    taken in C: ``signal.set_wakeup_fd`` makes the interpreter's own handler
    write each signal's number to a pipe, on whatever thread it runs, and a
    thread of this class reads the pipe and does the rest. Neither a
    handler computing on the loop's thread nor a busy world lock can keep
    the process from stopping.

    It is installed before the application starts, so a signal during
    start-up is a shutdown too (the default action would kill the process).
    On the first signal it waits until :meth:`serve` names the event loops,
    marks each tracker closing (a request that arrives from then on is
    answered 503 and its connection closed) and asks each loop to stop
    listening and to wait for the requests in flight. If the loops have
    not finished ``timeout`` seconds after the signal, or at a second
    signal, the requests still running are *cut*: answered 503 if they had
    not started their response, their connections closed otherwise; the
    PYPYSTM log is flushed, one line says how many were cut, and the
    process exits with status 1 (deadline) or 128 + the signal number
    (second signal).
    """

    #: How long a cut waits for a thread of the loop to answer the 503s.
    CUT_WAIT_SECONDS = 1.0
    #: The byte :meth:`uninstall` writes to end the thread (no signal is 0).
    _STOP = 0

    def __init__(self, timeout: float) -> None:
        self.servings: list[Serving] = []
        self.timeout = timeout
        self.signalled = threading.Event()
        self.ready = threading.Event()      # set by serve()
        # Whoever takes it decides how the process ends: the main thread
        # (a clean stop) or the shutdown thread (a cut).
        self.ending = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="tornado-stm-shutdown",
                                        daemon=True)
        self._pipe: Optional[tuple[int, int]] = None
        self._previous: Optional[tuple[int, dict[int, Any]]] = None

    def install(self) -> None:
        """Take SIGINT and SIGTERM over (on the main thread)."""
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)   # a signal handler must never block
        self._pipe = (read_end, write_end)
        previous_fd = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        # A Python handler still has to be set, or the default action kills
        # the process; the pipe carries the signal, so it does nothing.
        handlers = {signum: signal.signal(signum, _signal_goes_through_the_pipe)
                    for signum in (signal.SIGINT, signal.SIGTERM)}
        self._previous = (previous_fd, handlers)
        self._thread.start()

    def uninstall(self) -> None:
        """Give the signals back as they were and end the thread (a clean stop)."""
        if self._previous is None or self._pipe is None:
            return
        previous_fd, handlers = self._previous
        self._previous = None
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(previous_fd)
        os.write(self._pipe[1], bytes([self._STOP]))
        self._thread.join(5)
        for fd in self._pipe:
            os.close(fd)
        self._pipe = None

    def serve(self, servings: list[Serving]) -> None:
        """The loops are serving: from now on a shutdown stops them."""
        self.servings = servings
        self.ready.set()

    def clean_exit(self) -> bool:
        """Called by the main thread when the loop has finished: True to go on."""
        return self.ending.acquire(blocking=False)

    def _next_signal(self, timeout: Optional[float]) -> Optional[int]:
        """The next signal's number; None when ``timeout`` passes first."""
        assert self._pipe is not None
        ready, _, _ = select.select([self._pipe[0]], [], [], timeout)
        if not ready:
            return None
        signum = os.read(self._pipe[0], 1)[0]
        if signum == self._STOP:
            raise _Uninstalled()
        return signum

    def _run(self) -> None:
        try:
            self._shut_down()
        except _Uninstalled:
            pass

    def _shut_down(self) -> None:
        first = self._next_signal(None)
        assert first is not None
        deadline = time.monotonic() + self.timeout
        name = signal.Signals(first).name
        while not self.ready.is_set():   # the application is still starting
            again = self._next_signal(0.05)
            if again is not None:
                return self._cut_again(again, wait=0.0)
        for serving in self.servings:
            serving.tracker.closing = True
        # Said once it is true (a request arriving from now on is refused),
        # and before the loops stop (then the process ends).
        # One write, its newline included: print() writes the newline apart,
        # and a worker's access-log line could land between the two.
        sys.stdout.write(f"tornado-stm serve: {name}: no new connections; finishing requests "
                         f"in flight (at most {self.timeout:g}s; {name} again stops at once)\n")
        sys.stdout.flush()
        self.signalled.set()        # a loop that starts serving from now on stops at once
        for serving in self.servings:
            serving.call(lambda serving=serving: serving.begin and serving.begin())
        again = self._next_signal(max(0.0, deadline - time.monotonic()))
        if again is not None:
            return self._cut_again(again, wait=0.3)
        return self._cut(f"shutdown timeout of {self.timeout:g}s passed", 1,
                         wait=self.CUT_WAIT_SECONDS)

    def _cut_again(self, signum: int, wait: float) -> None:
        """A second signal: stop at once, with status 128 + its number."""
        self._cut(f"{signal.Signals(signum).name} again: stopped at once", 128 + signum, wait)

    def _cut(self, why: str, status: int, wait: float) -> None:
        if not self.ending.acquire(blocking=False):
            return  # the main thread is ending the process cleanly
        # Each loop answers the 503s of its own connections, unless it is
        # busy (a runaway handler, or one holding the world lock): then
        # exiting closes them.
        outcomes: list[dict[str, int]] = [{} for _ in self.servings]
        waits = [serving.call(lambda serving=serving, out=out: out.update(serving.tracker.cut_all()))
                 for serving, out in zip(self.servings, outcomes)]
        deadline = time.monotonic() + wait
        for done in waits:
            if done is not None:
                done.wait(max(0.0, deadline - time.monotonic()))
        cut = sum(out.get("cut", serving.tracker.count)
                  for serving, out in zip(self.servings, outcomes))
        answered = sum(out.get("answered", 0) for out in outcomes)
        outcome = any(outcomes)
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
        return self.track(self.app, server_conn, request_conn)

    def track(self, app: Any, server_conn: object, request_conn: Any) -> "_TrackedMessage":
        """``app.start_request(...)``, the request counted here."""
        return _TrackedMessage(self, app, server_conn, _TrackedConnection(self, request_conn))

    def on_close(self, server_conn: object) -> None:
        self.app.on_close(server_conn)

    def counting(self, callback: Any) -> Any:
        """``callback`` (the delegate of an HTTPServer the application started itself,
        Tornado's ``main()``: ``app.listen(port)``) with its requests counted here
        too, so that a signal drains them."""
        if isinstance(callback, tornado.httputil.HTTPServerConnectionDelegate):
            return _CountedBy(self, callback)
        return callback

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
        """On the loop: answer 503 to every request in flight that has not started
        its response, close the connections of the others."""
        cut = answered = 0
        for connection in list(self.in_flight):
            cut += 1
            if connection.respond_unavailable():
                answered += 1
            else:
                connection.close_stream()
        return {"cut": cut, "answered": answered}


class _CountedBy(tornado.httputil.HTTPServerConnectionDelegate):
    """An application's own HTTPServer delegate whose requests a tracker counts."""

    def __init__(self, tracker: InFlightRequests, app: Any) -> None:
        self.tracker = tracker
        self.app = app

    @property
    def count(self) -> int:
        """The tracker's requests in flight: the balancer reads a loop's load from it."""
        return self.tracker.count

    def start_request(self, server_conn: object, request_conn: Any) -> Any:
        return self.tracker.track(self.app, server_conn, request_conn)

    def on_close(self, server_conn: object) -> None:
        self.app.on_close(server_conn)


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

    def __init__(self, tracker: InFlightRequests, app: Any, server_conn: object,
                 connection: _TrackedConnection) -> None:
        self.tracker = tracker
        self.connection = connection
        self.inner = app.start_request(server_conn, connection)
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
