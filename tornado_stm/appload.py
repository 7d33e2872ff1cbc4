"""Loading the application ``tornado-stm serve MODULE:ATTR`` names, and what to instrument.

**What runs where.** ATTR may be an Application, a function returning one
(a *factory*, plain or ``async``), or Tornado's usual ``main``::

    async def main():
        app = make_app()
        app.listen(8888)
        await asyncio.Event().wait()

:func:`start_target` calls it *on the transactional loop*, so that what a
factory starts there (a ``PeriodicCallback``, ``debug=True``'s
autoreload) runs with the server. A target that starts listening by
itself (``main`` above, or a factory calling ``app.listen``) keeps its
own sockets and ``serve`` binds nothing more; the listening sockets
are found by comparing the process's listening sockets before and after
(``/proc/self/fd``), so nothing in Tornado is patched. Its HTTPServers
(:attr:`Started.own_servers`) then hand their sockets to every event loop
of the server (``binding.take_over``), and ``serve`` counts and drains
their requests as its own.

**What is instrumented.** The instrumentation rewrites a module when it is
imported, and which classes handle requests is known only once the
application exists. Rather than re-importing afterwards (the module bodies
and the factory would run twice, and the Application already built would
keep the plain classes), :class:`AppCodeFinder` decides at import time:
the package of MODULE, plus every module loaded from the directory MODULE
comes from (the application's own project; never the standard library,
site-packages or tornado-stm itself). Once the application is up,
:func:`instrumentation_report` walks its rules (nested routers and
applications included) and names, for the banner, the modules
instrumented, and warns about every handler whose code is not (an
installed package, or a module imported before ``serve`` started),
saying which ``--instrument`` would fix it.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.machinery
import inspect
import logging
import os
import site
import socket
import sys
import sysconfig
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Optional, Sequence

from tornado_stm.instrument.hook import InstrumentingFinder, InstrumentingLoader

logger = logging.getLogger(__name__)

#: Top-level packages never instrumented, wherever they are loaded from.
NEVER_INSTRUMENTED = frozenset({"tornado_stm", "stmlog_tools", "tornado"})

#: How often the loader looks for a target's own listening sockets while it runs.
_POLL_SECONDS = 0.05


class LoadError(Exception):
    """The application cannot be loaded; the message is the one line the user sees."""


def one_line(exc: BaseException) -> str:
    """``Type: message (file, line N)`` of the innermost frame."""
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        where = f" ({tb.tb_frame.f_code.co_filename}, line {tb.tb_lineno})"
    return f"{type(exc).__name__}: {exc}{where}"


# -- what is instrumented --------------------------------------------------------

def _library_dirs() -> list[str]:
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths = sysconfig.get_paths()
    dirs.update(paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")
                if key in paths)
    try:
        dirs.update(site.getsitepackages())
        dirs.add(site.getusersitepackages())
    except AttributeError:  # a virtualenv's old site module
        pass
    return sorted(os.path.realpath(d) for d in dirs if d)


def _is_under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def is_library_path(path: str) -> bool:
    """True for files of the interpreter, the standard library and installed packages."""
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return True
    return any(_is_under(real, directory) for directory in _library_dirs())


def project_root(module_name: str) -> Optional[str]:
    """The directory MODULE's top-level package or module is found in, unless a library one.

    Found with the path finder alone, so nothing is imported (an imported
    ``__init__`` could no longer be instrumented).
    """
    top = module_name.split(".")[0]
    spec = importlib.machinery.PathFinder.find_spec(top)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        root = os.path.dirname(os.path.realpath(list(spec.submodule_search_locations)[0]))
    elif spec.origin:
        root = os.path.dirname(os.path.realpath(spec.origin))
    else:
        return None
    return None if is_library_path(root) else root


class AppCodeFinder(InstrumentingFinder):
    """Instruments the modules matching the patterns, and every module loaded from ``root``."""

    def __init__(self, patterns: Sequence[str], root: Optional[str]) -> None:
        super().__init__(patterns)
        self.root = root

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[ModuleType] = None) -> Optional[importlib.machinery.ModuleSpec]:
        top = fullname.partition(".")[0]
        if top in NEVER_INSTRUMENTED:
            return None
        if self.matches(fullname):
            return super().find_spec(fullname, path, target)
        if self.root is None or top in sys.stdlib_module_names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if (spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader)
                or not spec.origin):
            return None
        origin = os.path.realpath(spec.origin)
        if not _is_under(origin, self.root) or is_library_path(origin):
            return None
        spec.loader = InstrumentingLoader(spec.loader.name, spec.loader.path)
        return spec


def install_finder(patterns: Sequence[str], root: Optional[str]) -> AppCodeFinder:
    """Put an :class:`AppCodeFinder` first on ``sys.meta_path``."""
    finder = AppCodeFinder(patterns, root)
    sys.meta_path.insert(0, finder)
    return finder


def is_instrumented(module: Optional[ModuleType]) -> bool:
    return isinstance(getattr(module, "__loader__", None), InstrumentingLoader)


def instrumented_modules() -> list[str]:
    return sorted(name for name, module in list(sys.modules.items()) if is_instrumented(module))


def handler_classes(apps: Sequence[Any]) -> list[type]:
    """Every RequestHandler class the applications route to, nested routers included."""
    import tornado.routing
    import tornado.web

    found: list[type] = []
    seen: set[int] = set()

    def target(item: Any) -> None:
        if isinstance(item, type) and issubclass(item, tornado.web.RequestHandler):
            if item not in found:
                found.append(item)
        elif isinstance(item, tornado.web.Application):
            if id(item) in seen:
                return
            seen.add(id(item))
            router(item.default_router)
            router(item.wildcard_router)
            target(item.settings.get("default_handler_class"))
        elif isinstance(item, tornado.routing.RuleRouter):
            router(item)

    def router(item: Any) -> None:
        if id(item) in seen:
            return
        seen.add(id(item))
        for rule in getattr(item, "rules", ()):
            target(rule.target)

    for app in apps:
        target(app)
    return found


def _framework(module_name: str) -> bool:
    return module_name.partition(".")[0] in NEVER_INSTRUMENTED


@dataclass
class InstrumentationReport:
    """What the banner says about instrumentation, and the warnings."""

    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def instrumentation_report(apps: Sequence[Any], backend: str, how: str) -> InstrumentationReport:
    """Check that every handler's code (its class and its application-side bases) is instrumented."""
    report = InstrumentationReport()
    classes = handler_classes(apps)
    if backend != "stm":
        report.lines.append(f"instrumented: nothing (the {backend} backend)")
        return report
    modules = instrumented_modules()
    shown = ", ".join(modules[:12]) + (f" and {len(modules) - 12} more" if len(modules) > 12
                                       else "")
    report.lines.append(f"instrumented ({how}): {shown or 'nothing yet'}")
    own = [cls for cls in classes if not _framework(cls.__module__)]
    uncovered: dict[str, list[str]] = {}
    for cls in own:
        for base in cls.__mro__:
            if base is object or _framework(base.__module__):
                continue
            if not is_instrumented(sys.modules.get(base.__module__)):
                uncovered.setdefault(base.__module__, []).append(
                    cls.__qualname__ if base is cls else f"{cls.__qualname__} (its base "
                    f"{base.__qualname__})")
    handler_modules = sorted({cls.__module__ for cls in own})
    report.lines.append(f"handlers: {len(own)} in {', '.join(handler_modules) or 'no module'}"
                        + ("" if uncovered else ", all instrumented"))
    for module_name, names in sorted(uncovered.items()):
        where = getattr(sys.modules.get(module_name), "__file__", None) or "built in"
        report.warnings.append(
            f"handler {', '.join(names)} in module {module_name!r} ({where}) is not "
            "instrumented: its code runs under the world lock, one request at a time "
            f"(add --instrument {module_name})")
    return report


# -- importing and starting the target --------------------------------------------

def import_target(module_name: str, attr: str) -> Any:
    """Import MODULE (with the current directory on sys.path) and return ATTR."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise LoadError(f"cannot import {module_name!r}: no module named {exc.name!r} "
                            f"(looked in {os.getcwd()} and sys.path)") from None
        raise LoadError(f"importing {module_name!r} failed: {one_line(exc)}") from None
    except Exception as exc:
        raise LoadError(f"importing {module_name!r} failed: {one_line(exc)}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise LoadError(f"module {module_name!r} has no attribute {attr!r}") from None


def script_name(module_name: str) -> str:
    """What the application sees as ``sys.argv[0]``: its module's file, as when run as a script.

    Known before the import (the application may parse its options at import time).
    """
    if "." not in module_name:
        spec = importlib.machinery.PathFinder.find_spec(module_name)
        if spec is not None and spec.origin and os.path.isfile(spec.origin):
            return spec.origin
    return module_name


@dataclass
class Started:
    """A target that has run on the loop."""

    app: Optional[Any] = None                  # the Application to serve, if serve listens
    own_urls: list[str] = field(default_factory=list)  # where the target listens by itself
    own_servers: list[Any] = field(default_factory=list)  # the HTTPServers it started
    apps: list[Any] = field(default_factory=list)      # every Application, for the report
    task: Optional[asyncio.Future] = None      # a main() still running
    exit_status: Optional[int] = None          # the target called sys.exit()
    status: int = 0                            # serve's exit status once it stops

    @property
    def listens_itself(self) -> bool:
        return bool(self.own_urls)


async def start_target(target: Any, label: str, reload: bool = False) -> Started:
    """Run the target on the running loop until it has given an app or started listening.

    With ``reload``, Tornado's autoreload is started on the loop first.
    """
    import tornado.httpserver
    import tornado.web

    if reload:
        start_reloading()

    if isinstance(target, type) and not issubclass(target, tornado.web.Application):
        raise LoadError(f"{label} is the class {target.__name__}, "
                        "not a tornado.web.Application or a function returning one")
    if not callable(target) and not isinstance(target, tornado.web.Application):
        raise LoadError(f"{label} is a {type(target).__name__}, "
                        "not a tornado.web.Application or a function returning one")
    before = listening_sockets()
    task: Optional[asyncio.Future] = None
    try:
        result = target if isinstance(target, tornado.web.Application) else target()
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(_exit_as_value(result))
            while not task.done():
                await asyncio.wait({task}, timeout=_POLL_SECONDS)
                if not task.done() and set(listening_sockets()) - set(before):
                    break   # Tornado's main(): it listens, then waits for ever
            if task.done():
                result, task = task.result(), None
                if isinstance(result, SystemExit):
                    raise result
    except SystemExit as exc:   # tornado.options' --help, or the app's own sys.exit()
        code = exc.code
        if isinstance(code, str):
            print(code, file=sys.stderr)
        return Started(exit_status=code if isinstance(code, int) else (0 if code is None else 1))
    except LoadError:
        raise
    except Exception as exc:
        raise LoadError(f"{label}() failed: {one_line(exc)}") from None
    own = {inode: url for inode, url in listening_sockets().items() if inode not in before}
    if own:
        apps = [result] if isinstance(result, tornado.web.Application) else live_objects(
            tornado.web.Application)
        return Started(own_urls=sorted(own.values()), apps=apps, task=task,
                       own_servers=live_objects(tornado.httpserver.HTTPServer))
    if task is not None:  # pragma: no cover - the loop above only leaves a task when listening
        raise LoadError(f"{label}() is still running and listens on nothing")
    if not isinstance(result, tornado.web.Application):
        raise LoadError(f"{label}() returned {_a(result)}, not a tornado.web.Application, "
                        "and listens on nothing")
    return Started(app=result, apps=[result])


async def _exit_as_value(awaitable: Any) -> Any:
    """Await; a SystemExit comes back as a value (raised in a task, it would stop the loop)."""
    try:
        return await awaitable
    except SystemExit as exc:
        return exc


def _a(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def live_objects(kind: type) -> list[Any]:
    """The objects of ``kind`` that exist: the Applications a ``main()`` that
    listens by itself serves, and its HTTPServers.

    One scan of the heap at start-up (before serve makes servers of its
    own); the main function keeps them in local variables we cannot
    otherwise see.
    """
    import gc
    return [obj for obj in gc.get_objects() if isinstance(obj, kind)]


# -- the process's listening sockets ---------------------------------------------

def listening_sockets() -> dict[str, str]:
    """The listening stream sockets of this process: inode (or fd) -> URL-ish address.

    Read from ``/proc/self/fd`` (Linux) or ``/dev/fd``; empty where neither
    lists descriptors.
    """
    from tornado_stm.binding import socket_url

    for directory in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        break
    else:
        return {}
    found: dict[str, str] = {}
    for name in names:
        try:
            fd = int(name)
            link = os.readlink(os.path.join(directory, name)) if directory.startswith(
                "/proc") else f"fd:{fd}"
        except (ValueError, OSError):
            continue
        if directory.startswith("/proc") and not link.startswith("socket:"):
            continue
        try:
            probe = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            if (probe.type == socket.SOCK_STREAM
                    and probe.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)):
                found[link] = socket_url(probe)
        except OSError:
            pass
        finally:
            probe.close()
    return found


# -- the application's own command line, and autoreload ---------------------------

def give_application_argv(argv0: str, app_args: list[str]) -> list[str]:
    """Make ``sys.argv`` what the application expects; return the one to restore on reload.

    An application calling ``tornado.options.parse_command_line()`` reads
    ``sys.argv``: it gets ``[its file, *the arguments after --]``. Tornado's
    autoreload re-executes ``sys.argv``: a reload hook puts the whole
    ``tornado-stm serve ...`` command line back first.
    """
    import tornado.autoreload

    original = list(sys.argv)

    def restore() -> None:
        sys.argv[:] = original
        try:   # the PYPYSTM log so far, before the process is replaced
            from tornado_stm.stm import flush_log
            flush_log()
        except Exception:  # the reload goes on regardless
            logger.exception("flushing the PYPYSTM log before reloading failed")

    tornado.autoreload.add_reload_hook(restore)
    sys.argv[:] = [argv0, *app_args]
    return original


def start_reloading() -> None:
    """``--reload``: Tornado's autoreload on the running loop (restart when a module changes)."""
    import tornado.autoreload
    tornado.autoreload.start()
