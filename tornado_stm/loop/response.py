"""A handler's response inside an atomic section: optimistic, sent at commit.

A Tornado handler builds its response on objects of its own connection:
``write`` appends to the handler's buffer, ``set_header`` and
``set_status`` change its fields, ``finish`` and ``flush`` hand bytes to
the connection. None of that is shared with other sections, and only the
last step -- bytes reaching the connection -- cannot be taken back. So a
section calling these methods stays optimistic:

* The first response call of an attempt takes a *checkpoint* of the
  handler's own state (its ``__dict__``, output buffer, headers, cookies)
  and puts a :class:`_HeldConnection` in front of ``request.connection``.
  The call then runs for real, on the handler, at once: later calls see
  its effects exactly as in a serial run (``_finished``, ``get_status()``).
* What reaches the held connection (``write_headers``, ``write``,
  ``finish``, ``set_close_callback``) and the access-log line are
  recorded, in order. When the section commits -- or becomes inevitable,
  which is a commit point too -- the real connection is put back and the
  recording replayed onto it; the futures ``flush``/``finish`` returned
  resolve with the real ones.
* When the attempt aborts, the checkpoint is restored and the recording
  dropped: the retry starts from the handler as it was.

The arguments of these calls are read as comparisons read them
(``barriers.deep_view``), so that a response built from shared state
comes from one consistent snapshot, checked at commit.

What cannot be buffered makes the section inevitable, as before: a
handler with output transforms (``compress_response``: the gzip state
cannot be copied), a ``WebSocketHandler``, and anything that really
leaves the process (``detach``, I/O to other connections).

:func:`install` registers these methods with the call policy; the event
loops call it.
"""

from __future__ import annotations

import copy
import sys
import threading
from typing import Any, Callable, Optional

import tornado.httputil
import tornado.web
import tornado.websocket
from tornado.concurrent import Future, chain_future

from tornado_stm.stm import barriers, current, policy
from tornado_stm.stm.txn import Transaction

#: RequestHandler methods that only build the handler's own response. The
#: XSRF ones (``xsrf_token`` a property, its getter registered) read the
#: request's cookie and may set the token's cookie on the response,
#: nothing shared: the checkpoint undoes them as it undoes ``set_cookie``.
RESPONSE_METHODS = (
    "write", "finish", "flush", "redirect", "render", "render_string", "send_error",
    "set_status", "set_header", "add_header", "clear_header", "clear",
    "set_cookie", "clear_cookie", "clear_all_cookies", "set_signed_cookie",
    "set_secure_cookie", "set_etag_header", "xsrf_form_html", "check_xsrf_cookie",
    "xsrf_token",
)

_installed = False
_install_lock = threading.Lock()

#: Tornado's own ``RequestHandler._log`` (the access-log line of a request).
_tornado_log = tornado.web.RequestHandler._log


def install() -> None:
    """Let sections call the response methods optimistically (idempotent)."""
    global _installed
    with _install_lock:
        if _installed:
            return
        for name in RESPONSE_METHODS:
            method = getattr(tornado.web.RequestHandler, name, None)
            if method is not None:
                policy.register_special(method, _respond)
        tornado.web.RequestHandler._log = _log  # type: ignore[method-assign]
        _installed = True


def _respond(tx: Transaction, f: Any, args: tuple, kwargs: dict) -> Any:
    """The call policy of a response method (also asked outside optimistic mode)."""
    handler = handler_of(f, args)
    if tx is None or tx.inevitable:
        if tx is None or handler is not tx.subject:
            _Marshalled.put_before(handler)
        return f(*args, **kwargs)
    if _Recording.of(tx, handler) is None:
        # Another request's handler (a long poll answered by a post, an
        # event stream's subscribers) is reachable from shared state, and
        # its request's own code reads it: changed in place here, it would
        # show what this attempt has not committed.
        if handler is not tx.subject or not can_hold(handler):
            tx.become_inevitable(f"call to {policy.qualified_name(f)}")
            _Marshalled.put_before(handler)
            return f(*args, **kwargs)
        _Recording(tx, handler)
    args = tuple([barriers.deep_view(tx, arg) for arg in args])
    if kwargs:
        kwargs = {name: barriers.deep_view(tx, value) for name, value in kwargs.items()}
    return f(*args, **kwargs)


def handler_of(f: Any, args: tuple) -> Any:
    """The handler a ``RequestHandler`` method was called for: bound
    (``self.write``), or unbound with the handler first
    (``RequestHandler.write(self, ...)``)."""
    handler = getattr(f, "__self__", None)
    if handler is None and args:
        handler = args[0]
    return handler


def can_hold(handler: Any) -> bool:
    """True if ``handler``'s response can be held back to a commit."""
    return (holds_responses_of(type(handler))
            and getattr(handler.request, "connection", None) is not None
            # Output transforms (gzip) keep compressor state that cannot be copied.
            and not getattr(handler, "_transforms", None))


def holds_responses_of(klass: type) -> bool:
    """True if responses of handlers of this class can be held (not a web socket)."""
    return (issubclass(klass, tornado.web.RequestHandler)
            and not issubclass(klass, tornado.websocket.WebSocketHandler))


def _log(handler: tornado.web.RequestHandler) -> None:
    """``RequestHandler._log``: an attempt's access-log line waits for its commit.

    An application's own ``log_function`` (or ``log_request``) runs in place,
    in the section, as stock Tornado runs it inside ``finish()``: it may
    keep state (metrics) that the handler's code shares.
    """
    recording = _Recording.of(current(), handler)
    if recording is None or _logs_by_itself(handler.application):
        _tornado_log(handler)
    else:
        recording.hold(_tornado_log, (handler,))


def _logs_by_itself(application: Any) -> bool:
    """True if ``application`` logs requests with code of its own."""
    return ("log_function" in application.settings
            or type(application).log_request is not tornado.web.Application.log_request)


class _Recording:
    """One attempt's checkpoint of a handler and what its response sent, held back.

    It is the attempt's ``held_response`` (a second handler's, rare, hangs
    on the first's ``others``). The actions are ``(function, arguments,
    future or None)``, replayed in order at the commit.
    """

    __slots__ = ("tx", "handler", "actions", "saved", "saved_buffer", "saved_headers",
                 "saved_cookie", "connection", "others")

    def __init__(self, tx: Transaction, handler: tornado.web.RequestHandler) -> None:
        self.tx = tx
        self.handler = handler
        self.actions: list[tuple[Callable[..., Any], tuple, Optional[Future]]] = []
        # Copied item by item, not with dict(vars(handler)): on free-threaded
        # CPython before 3.13.6 (gh-132617) that merge checks the *shared*
        # keys of the class, so another thread giving a new attribute name to
        # another handler of the class (its first requests, on a fresh
        # server) made it raise "dict mutated during update": the request
        # answered 500 without running its handler.
        self.saved = dict(vars(handler).items())
        # None while Tornado's clear() runs set_default_headers() inside the
        # handler's __init__: the buffer is made after it.
        buffer = getattr(handler, "_write_buffer", None)
        self.saved_buffer = list(buffer) if buffer is not None else None
        self.saved_headers = _copy_headers(handler._headers)
        cookie = getattr(handler, "_new_cookie", None)
        self.saved_cookie = copy.deepcopy(cookie) if cookie is not None else None
        self.connection = handler.request.connection
        self.others: list[_Recording] = []
        handler.request.connection = _HeldConnection(self)
        first = tx.held_response
        if first is None:
            tx.held_response = self
        else:
            first.others.append(self)
        tx.undo_on_abort(self.restore)
        tx.defer(self.release)

    @staticmethod
    def of(tx: Optional[Transaction], handler: Any) -> Optional["_Recording"]:
        """The recording ``tx`` holds for ``handler``, if any."""
        first = tx.held_response if tx is not None else None
        if first is None or first.handler is handler:
            return first
        for other in first.others:
            if other.handler is handler:
                return other
        return None

    @classmethod
    def for_attempt(cls, tx: Transaction, handler: tornado.web.RequestHandler) -> "_Recording":
        recording = cls.of(tx, handler)
        return recording if recording is not None else cls(tx, handler)

    def hold(self, function: Callable[..., Any], args: tuple,
             future: Optional[Future] = None) -> None:
        self.actions.append((function, args, future))

    def restore(self) -> None:
        """The attempt aborted: the handler as it was before its first response call."""
        handler = self.handler
        state = vars(handler)
        state.clear()
        state.update(self.saved)
        if self.saved_buffer is not None:
            handler._write_buffer = self.saved_buffer
        handler._headers = _copy_headers(self.saved_headers)
        if self.saved_cookie is not None:
            handler._new_cookie = self.saved_cookie
        handler.request.connection = self.connection

    def release(self) -> None:
        """The attempt committed (or became inevitable): send what it held back."""
        self.handler.request.connection = self.connection
        if self.tx.held_response is self:
            self.tx.held_response = None
        actions, self.actions = self.actions, []
        for function, args, future in actions:
            sent = function(*args)
            # The future the handler was given only needs the outcome if
            # something still holds it (it was awaited, kept, given a
            # callback): a synchronous handler drops finish()'s. Then the
            # references are the action's, this loop's and getrefcount's.
            if future is not None and sys.getrefcount(future) > _DROPPED_FUTURE_REFERENCES:
                chain_future(sent, future)
                # Tornado marks a failed write's future as seen (a closed
                # stream); the copy a synchronous handler dropped is marked too.
                future.add_done_callback(_mark_seen)


#: sys.getrefcount of a held write's future no one else holds, in release().
_DROPPED_FUTURE_REFERENCES = 3


def _mark_seen(future: Future) -> None:
    if not future.cancelled():
        future.exception()


def _copy_headers(headers: tornado.httputil.HTTPHeaders) -> tornado.httputil.HTTPHeaders:
    """A copy of ``HTTPHeaders`` that shares nothing mutable with it.

    Not ``headers.copy()``: it validates every line again through
    ``add()``, which costs more than the whole section of a short handler.
    The object's fields are dicts of strings or of lists of strings (in
    every Tornado 6 release), so copying them one level down is enough.
    """
    copy = object.__new__(type(headers))
    fields = vars(copy)
    for name, value in vars(headers).items():
        if type(value) is dict:
            value = {key: list(item) if type(item) is list else item
                     for key, item in value.items()}
        fields[name] = value
    return copy


class _Marshalled:
    """Stands in for the connection of a request another loop serves, once
    a handler on this thread answers it (a long poll answered by a post).

    A connection's stream belongs to the thread of its loop: written from
    another thread, it races its owner's own writes and event handling. The
    calls go to the owner loop instead, in the order they were made; while
    some wait there, the owner's own calls queue behind them.
    """

    def __init__(self, real: Any, loop: Any) -> None:
        self._real = real
        self._loop = loop
        self._waiting = 0
        self._lock = threading.Lock()

    @classmethod
    def put_before(cls, handler: Any) -> None:
        """Put one in front of ``handler``'s connection if another loop's thread owns it."""
        request = getattr(handler, "request", None)
        connection = getattr(request, "connection", None)
        if connection is None or isinstance(connection, (cls, _HeldConnection)):
            return
        io_loop = getattr(getattr(connection, "stream", None), "io_loop", None)
        loop = getattr(io_loop, "asyncio_loop", None)
        on_another_thread = getattr(loop, "_on_another_thread", None)
        if on_another_thread is not None and on_another_thread():
            request.connection = cls(connection, loop)

    def write_headers(self, *args: Any) -> Any:
        return self._call("write_headers", args, returns_future=True)

    def write(self, *args: Any) -> Any:
        return self._call("write", args, returns_future=True)

    def finish(self, *args: Any) -> None:
        self._call("finish", args, returns_future=False)

    def set_close_callback(self, *args: Any) -> None:
        self._call("set_close_callback", args, returns_future=False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def _call(self, name: str, args: tuple, returns_future: bool) -> Any:
        method = getattr(self._real, name)
        with self._lock:
            direct = self._waiting == 0 and not self._loop._on_another_thread()
            if not direct:
                self._waiting += 1
        if direct:
            return method(*args)
        future: Optional[Future] = Future(loop=self._loop) if returns_future else None

        def run_on_the_owner() -> None:
            try:
                result = method(*args)
            except Exception as exc:
                if future is None:
                    raise
                future.set_exception(exc)
                return
            finally:
                with self._lock:
                    self._waiting -= 1
            if future is not None:
                chain_future(result, future)

        self._loop.call_soon_threadsafe(run_on_the_owner)
        return future


class _HeldConnection:
    """Stands in for ``request.connection`` while a section's response is uncommitted.

    What an HTTP/1 connection does that a response sends is held until the
    commit; a write answers at once with a future that resolves with the
    real one's.
    """

    def __init__(self, recording: _Recording) -> None:
        self._recording = recording
        self._real = recording.connection

    def write_headers(self, start_line: Any, headers: Any, *rest: Any) -> Future:
        # The handler may change its header object later; send it as it is now.
        return self._hold_write(self._real.write_headers,
                                (start_line, _copy_headers(headers), *rest))

    def write(self, *args: Any) -> Future:
        return self._hold_write(self._real.write, args)

    def finish(self, *args: Any) -> None:
        self._recording.hold(self._real.finish, args)

    def set_close_callback(self, *args: Any) -> None:
        self._recording.hold(self._real.set_close_callback, args)

    def __getattr__(self, name: str) -> Any:
        if name == "detach":
            # The connection leaves Tornado's hands: nothing can be held back after this.
            self._recording.tx.become_inevitable("detaching a connection")
            return self._real.detach
        return getattr(self._real, name)

    def _hold_write(self, function: Callable[..., Any], args: tuple) -> Future:
        future: Future = Future()
        self._recording.hold(function, args, future)
        return future
