"""A request's synchronous hooks in one atomic section, as stock Tornado runs them in one step.

Tornado's ``RequestHandler._execute`` calls ``prepare()``, then the HTTP
method (``get``...), then ``finish()``, which calls ``on_finish()``; an
exception on the way goes to ``write_error()``. When none of those awaits,
stock Tornado runs them in one step of its loop: no other request's code
comes in between. Each instrumented hook called from framework code would
start a section of its own, and another request's section could commit
between ``prepare()`` and ``get()`` (a counter read in one and used in the
other, a check in ``prepare()`` that ``get()`` relies on).

So a request whose hooks are all plain functions runs Tornado's own
``_execute`` inside one section: each attempt takes a checkpoint of the
handler and holds its connection back (``response._Recording``), restores
the request's parsed arguments, and drives the coroutine by hand. It
finishes without suspending in the common case; the response is sent when
the section commits, and an abort restores the handler for the retry.
Should it suspend after all (a hook returned something to await), what
ran so far commits as the section, and the rest goes on outside it, hook
by hook, as before.

Tornado's own method decorators (``@tornado.web.authenticated``,
``addslash``, ``removeslash``) run inside the section with the method they
wrap: ``get_current_user()`` and ``get()`` see one state, as in stock
Tornado. Handlers this does not apply to keep Tornado's ``_execute``:
coroutine hooks, ``@stream_request_body``, output transforms such as gzip, web
sockets, and handler classes with code that is not instrumented (their
methods would run in the section unseen by the barriers; outside one,
they run as before, as plain code).

A held connection write that fails when the section commits (a
``Content-Length`` the body does not match, a closed stream) goes to
``_handle_request_exception``, as the same failure inside Tornado's
``_execute`` does.
"""

from __future__ import annotations

import inspect
import threading
import types
from typing import Any, Generator, Optional

import tornado.gen
import tornado.web
import tornado.websocket
from tornado.log import app_log

from tornado_stm.stm import calls, current, policy, run_section
from tornado_stm.stm.registry import is_instrumented
from tornado_stm.stm.threadcopies import ThreadCopies
from tornado_stm.loop import response

#: Tornado's own ``RequestHandler._execute`` and ``log_exception``.
_tornado_execute = tornado.web.RequestHandler._execute
_tornado_log_exception = tornado.web.RequestHandler.log_exception

_installed = False
_install_lock = threading.Lock()


def install() -> None:
    """Run the synchronous hooks of each request in one section, their
    response held to its commit (``response.install``); idempotent."""
    global _installed
    response.install()
    with _install_lock:
        if _installed:
            return
        tornado.web.RequestHandler._execute = _execute  # type: ignore[method-assign]
        tornado.web.RequestHandler.log_exception = _log_exception  # type: ignore[method-assign]
        for name in ARGUMENT_READERS:
            policy.register_special(getattr(tornado.web.RequestHandler, name),
                                    _read_arguments)
        # A message sent to a WebSocket's own peer: output, not application state.
        calls.OUTPUT_ONLY.update((tornado.websocket.WebSocketHandler.write_message,
                                  tornado.websocket.WebSocketHandler.ping))
        _installed = True


#: RequestHandler methods that read the request's argument tables in Tornado's code.
ARGUMENT_READERS = ("get_argument", "get_arguments", "get_body_argument",
                    "get_body_arguments", "get_query_argument", "get_query_arguments")


def _read_arguments(tx: Any, f: Any, args: tuple, kwargs: dict) -> Any:
    """The call policy of ``get_argument`` & co.: Tornado's code reads the
    request's tables in place, so a section that changed them (a
    ``prepare()`` merging a JSON body into ``request.arguments``) becomes
    inevitable first, which puts its changes there."""
    request = getattr(response.handler_of(f, args), "request", None)
    if tx is not None and not tx.inevitable and request is not None \
            and _changed_by(tx, request):
        tx.become_inevitable(f"{policy.qualified_name(f)} after changing the request's arguments")
    return f(*args, **kwargs)


def _changed_by(tx: Any, request: Any) -> bool:
    """True if section ``tx`` logged a change of ``request``'s fields or argument tables."""
    if id(request) in tx.attrs:
        return True
    for table in (request.arguments, request.query_arguments, request.body_arguments):
        if id(table) in tx.containers \
                or any(id(values) in tx.containers for values in table.values()):
            return True
    return False


async def _execute(self: tornado.web.RequestHandler, transforms: list, *args: bytes,
                   **kwargs: bytes) -> None:
    """``RequestHandler._execute``: in one section when every hook is a plain function."""
    if transforms or not _hooks_run_in_one_step(self):
        return await _tornado_execute(self, transforms, *args, **kwargs)
    parsed = _parsed_arguments(self.request)
    # Set before the checkpoint (Tornado's _execute sets it first thing): an
    # error handled below, after an attempt was rolled back, may still send.
    self._transforms = transforms
    try:
        suspended = run_section(_first_step, (self, transforms, args, kwargs, parsed))
    except Exception as exc:
        # Tornado's _execute handles what its hooks raise; what escapes the
        # section came from the held connection, replayed at the commit.
        _handle_as_tornado_does(self, exc)
        return
    if suspended is not None:
        coroutine, awaited = suspended
        await _go_on(coroutine, awaited)


def _hooks_run_in_one_step(handler: tornado.web.RequestHandler) -> bool:
    """True if this request's hooks can run as one section (see the module docstring)."""
    if current() is not None or handler.request.connection is None:
        return False
    key = (type(handler), handler.request.method)
    kinds = _one_step_kinds.of("one step")
    known = kinds.get(key)
    if known is None:
        known = kinds[key] = _plain_instrumented_hooks(*key)
    return known


#: Per thread (threadcopies: one table every loop reads was the hottest lock
#: of a short request): (handler class, HTTP method) -> whether its hooks
#: run in one section (_plain_instrumented_hooks).
_one_step_kinds = ThreadCopies()

_REQUEST_HANDLER_BASES = frozenset(tornado.web.RequestHandler.__mro__)


def _plain_instrumented_hooks(klass: type, http_method: Optional[str]) -> bool:
    """True if ``prepare`` and the method of ``klass`` for ``http_method`` are
    plain functions, every function ``klass`` defines below ``RequestHandler``
    is instrumented, and the class does not stream request bodies and is
    not a web socket.

    Tornado's own handlers (``StaticFileHandler``, ``ErrorHandler``) and
    mixins are not instrumented: they keep Tornado's ``_execute``.
    """
    if getattr(klass, "_stream_request_body", False) or not response.holds_responses_of(klass):
        return False
    if not all(is_instrumented(member) or _tornado_decorated(member)
               for base in klass.__mro__ if base not in _REQUEST_HANDLER_BASES
               for member in vars(base).values() if isinstance(member, types.FunctionType)):
        return False
    method = getattr(klass, http_method.lower(), None) \
        if http_method in klass.SUPPORTED_METHODS else None
    hooks = [klass.prepare] + ([method] if method is not None else [])
    # unwrap(): an instrumented coroutine function is a plain wrapper, marked
    # as a coroutine function only from Python 3.12 on.
    return not any(inspect.iscoroutinefunction(inspect.unwrap(hook))
                   or tornado.gen.is_coroutine_function(hook) for hook in hooks)


def _wrapper_code(decorator: Any) -> types.CodeType:
    def method(self: Any) -> None:
        pass
    return decorator(method).__code__


#: The code of the wrappers Tornado's method decorators make: they read the
#: handler's own state (``current_user``, the request's path) and answer
#: through its response (``redirect``, ``HTTPError``), nothing shared, so
#: they may run inside the request's section.
_TORNADO_WRAPPERS = frozenset(_wrapper_code(decorator) for decorator in (
    tornado.web.authenticated, tornado.web.addslash, tornado.web.removeslash))


def _tornado_decorated(function: types.FunctionType) -> bool:
    """``@tornado.web.authenticated`` (``addslash``, ``removeslash``) around an
    instrumented method."""
    wrapped = getattr(function, "__wrapped__", None)
    return function.__code__ in _TORNADO_WRAPPERS and isinstance(wrapped, types.FunctionType) \
        and (is_instrumented(wrapped) or _tornado_decorated(wrapped))


def _handle_as_tornado_does(handler: tornado.web.RequestHandler, exc: Exception) -> None:
    """What Tornado's ``_execute`` does with an exception its ``try`` caught."""
    try:
        handler._handle_request_exception(exc)
    except Exception:
        app_log.error("Exception in exception handler", exc_info=True)
    prepared = handler._prepared_future
    if prepared is not None and not prepared.done():
        prepared.set_result(None)


def _parsed_arguments(request: Any) -> tuple[dict, dict, dict]:
    """Copies of the request's arguments before ``_execute`` parses the body into them."""
    return (_copy_lists(request.arguments), _copy_lists(request.body_arguments),
            _copy_lists(request.files))


def _copy_lists(table: dict) -> dict:
    return {name: list(values) for name, values in table.items()} if table else {}


def _first_step(handler: tornado.web.RequestHandler, transforms: list, args: tuple,
                kwargs: dict, parsed: tuple[dict, dict, dict]) -> Optional[tuple]:
    """One attempt: Tornado's ``_execute`` from its start, up to its end or its first suspension.

    Returns None when it ended, else the suspended coroutine and what it awaits.
    """
    tx = current()
    # An abort restores the handler as it is here (its fields, buffer,
    # headers, connection), and the request's arguments as they were
    # before the first attempt parsed its body into them.
    response._Recording.for_attempt(tx, handler)
    tx.undo_on_abort(lambda: _restore_arguments(handler.request, parsed))
    coroutine = _tornado_execute(handler, transforms, *args, **kwargs)
    try:
        awaited = coroutine.send(None)
    except StopIteration:
        return None
    tx.undo_on_abort(coroutine.close)
    return coroutine, awaited


def _restore_arguments(request: Any, parsed: tuple[dict, dict, dict]) -> None:
    request.arguments, request.body_arguments, request.files = (
        _copy_lists(table) for table in parsed)


@types.coroutine
def _go_on(coroutine: Any, awaited: Any) -> Generator[Any, Any, Any]:
    """Drive the rest of a coroutine that suspended on ``awaited``, as ``await`` would."""
    while True:
        try:
            sent = yield awaited
        except BaseException as exc:          # thrown in by the task (a cancellation)
            try:
                awaited = coroutine.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                awaited = coroutine.send(sent)
            except StopIteration as stop:
                return stop.value


def _log_exception(self: tornado.web.RequestHandler, typ: Any, value: Any, tb: Any) -> None:
    """``log_exception``: the line an attempt logs waits for its commit, held
    with its response (an attempt that aborts would log it twice).

    Held only when the line will read the same at the commit: the exception
    (and those chained to it) carries plain values and formats itself as
    Python's own exceptions do. Otherwise the section becomes inevitable and
    logs it in place.
    """
    tx = current()
    if tx is not None and not tx.inevitable:
        recording = response._Recording.of(tx, self)
        if recording is not None and _formats_alike_later(value):
            recording.hold(_tornado_log_exception, (self, typ, value, tb))
            return
        tx.become_inevitable("logging a handler's exception")
    _tornado_log_exception(self, typ, value, tb)


#: Values whose formatting no later section can change.
_PLAIN_VALUES = (str, bytes, int, float, bool, type(None))


def _formats_alike_later(exc: Optional[BaseException], depth: int = 0) -> bool:
    """True if ``exc``, its chained exceptions and their arguments are
    formatted the same at any later time: plain arguments, and the
    ``__str__`` of Python's exceptions or of Tornado's ``HTTPError``."""
    if exc is None:
        return True
    if depth > 8 or type(exc).__str__ not in _PLAIN_FORMATTERS \
            or not all(type(arg) in _PLAIN_VALUES for arg in exc.args) \
            or getattr(exc, "__notes__", None):
        return False
    return (_formats_alike_later(exc.__cause__, depth + 1)
            and _formats_alike_later(exc.__context__, depth + 1))


#: ``__str__`` methods that format only an exception's arguments and fields.
_PLAIN_FORMATTERS = frozenset({BaseException.__str__, tornado.web.HTTPError.__str__,
                               KeyError.__str__, OSError.__str__,
                               SyntaxError.__str__})
