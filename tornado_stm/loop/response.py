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
import threading
from typing import Any, Callable, Optional

import tornado.httputil
import tornado.web
import tornado.websocket
from tornado.concurrent import Future, chain_future

from tornado_stm.stm import barriers, policy
from tornado_stm.stm.txn import Transaction

#: RequestHandler methods that only build the handler's own response.
RESPONSE_METHODS = (
    "write", "finish", "flush", "redirect", "render", "render_string", "send_error",
    "set_status", "set_header", "add_header", "clear_header", "clear",
    "set_cookie", "clear_cookie", "clear_all_cookies", "set_signed_cookie",
    "set_secure_cookie", "set_etag_header",
)

#: The instance attribute under which a handler keeps its attempt's recording.
_RECORDING = "_stm_response"

_installed = False
_install_lock = threading.Lock()


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
        _installed = True


def _respond(tx: Transaction, f: Any, args: tuple, kwargs: dict) -> Any:
    """The call policy of a response method (also asked outside optimistic mode)."""
    if tx is None or tx.inevitable:
        return f(*args, **kwargs)
    handler = getattr(f, "__self__", None)
    if handler is None and args:            # RequestHandler.write(self, ...)
        handler = args[0]
    if not _can_hold(handler):
        tx.become_inevitable(f"call to {policy.qualified_name(f)}")
        return f(*args, **kwargs)
    _Recording.for_attempt(tx, handler)
    args = tuple(barriers.deep_view(tx, arg) for arg in args)
    kwargs = {name: barriers.deep_view(tx, value) for name, value in kwargs.items()}
    return f(*args, **kwargs)


def _can_hold(handler: Any) -> bool:
    if not isinstance(handler, tornado.web.RequestHandler):
        return False
    if isinstance(handler, tornado.websocket.WebSocketHandler):
        return False
    request = getattr(handler, "request", None)
    if request is None or getattr(request, "connection", None) is None:
        return False
    # Output transforms (gzip) keep compressor state that cannot be copied.
    return not getattr(handler, "_transforms", None)


class _Recording:
    """One attempt's checkpoint of a handler and what its response sent, held back."""

    def __init__(self, tx: Transaction, handler: tornado.web.RequestHandler) -> None:
        self.tx = tx
        self.handler = handler
        self.actions: list[Callable[[], Any]] = []
        self.saved = dict(vars(handler))
        self.saved_buffer = list(handler._write_buffer)
        self.saved_headers = _header_pairs(handler._headers)
        cookie = getattr(handler, "_new_cookie", None)
        self.saved_cookie = copy.deepcopy(cookie) if cookie is not None else None
        self.connection = handler.request.connection
        handler.request.connection = _HeldConnection(self)
        # finish() logs the request: that line waits for the commit too.
        vars(handler)["_log"] = self._hold_log
        vars(handler)[_RECORDING] = self
        tx.undo_on_abort(self.restore)
        tx.defer(self.release)

    @classmethod
    def for_attempt(cls, tx: Transaction, handler: tornado.web.RequestHandler) -> "_Recording":
        # Not vars(handler).get(): on 3.13t, dict.get of a key that another
        # instance of the class once had (this one, after release() popped
        # it) takes about 25 us; getattr takes 0.2 us.
        recording = getattr(handler, _RECORDING, None)
        if recording is not None and recording.tx is tx:
            return recording
        return cls(tx, handler)

    def hold(self, action: Callable[[], Any]) -> None:
        self.actions.append(action)

    def _hold_log(self) -> None:
        handler = self.handler
        self.hold(lambda: type(handler)._log(handler))

    def restore(self) -> None:
        """The attempt aborted: the handler as it was before its first response call."""
        handler = self.handler
        state = vars(handler)
        state.clear()
        state.update(self.saved)
        handler._write_buffer = self.saved_buffer
        handler._headers = _headers_from(self.saved_headers)
        if self.saved_cookie is not None:
            handler._new_cookie = self.saved_cookie
        handler.request.connection = self.connection

    def release(self) -> None:
        """The attempt committed (or became inevitable): send what it held back."""
        handler = self.handler
        handler.request.connection = self.connection
        state = vars(handler)
        state.pop("_log", None)
        state.pop(_RECORDING, None)
        actions, self.actions = self.actions, []
        for action in actions:
            action()


def _header_pairs(headers: Any) -> list[tuple[str, str]]:
    """A cheap snapshot of ``HTTPHeaders``: the checkpoint's, needed again only on an abort."""
    return list(headers.get_all())


def _headers_from(pairs: list[tuple[str, str]]) -> Any:
    headers = tornado.httputil.HTTPHeaders()
    for name, value in pairs:
        headers.add(name, value)
    return headers


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


class _HeldConnection:
    """Stands in for ``request.connection`` while a section's response is uncommitted."""

    def __init__(self, recording: _Recording) -> None:
        self._recording = recording
        self._real = recording.connection

    # What an HTTP/1 connection does that a response sends: held until the commit.
    def write_headers(self, *args: Any) -> Optional[Future]:
        return self._hold("write_headers", args)

    def write(self, *args: Any) -> Optional[Future]:
        return self._hold("write", args)

    def finish(self, *args: Any) -> None:
        self._hold("finish", args)

    def set_close_callback(self, *args: Any) -> None:
        self._hold("set_close_callback", args)

    def __getattr__(self, name: str) -> Any:
        if name == "detach":
            # The connection leaves Tornado's hands: nothing can be held back after this.
            self._recording.tx.become_inevitable("detaching a connection")
            return self._real.detach
        return getattr(self._real, name)

    def _hold(self, name: str, args: tuple) -> Optional[Future]:
        if name == "write_headers":
            # The handler may change its header object later; send it as it is now.
            args = (args[0], _copy_headers(args[1]), *args[2:])
        real = self._real
        if name in ("finish", "set_close_callback"):
            self._recording.hold(lambda: getattr(real, name)(*args))
            return None
        future: Future = Future()

        def send() -> None:
            chain_future(getattr(real, name)(*args), future)

        self._recording.hold(send)
        return future
