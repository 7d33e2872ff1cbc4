"""Which loop of a per-thread server takes a new connection.

Every loop polls the same listening socket, so only a loop that is free
to poll accepts -- but when a burst of connections arrives while all
loops are idle, the first loop to wake would take the whole burst (Tornado
accepts up to 128 connections per wake-up) and serve it alone, one
request after another, while the other cores idle.

So the loop that accepts does not necessarily keep the connection: it
gives it to the loop with the least work waiting, itself on a tie. A
loop's *load* counts

* connections handed to it that have not yet begun their first request,
* requests in progress on it (from their headers to their end).

Idle keep-alive connections cost nothing and do not count, and a loop
running a long handler counts one request until it ends, so new
connections go elsewhere. A connection, once given, stays on its loop:
its stream, request and handler are touched by that loop's thread only.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, Callable, Optional

import tornado.httputil
import tornado.ioloop

#: How many connections one wake-up accepts at most; the rest wait for the next.
ACCEPTS_PER_WAKEUP = 64


class ConnectionBalancer:
    """The load of every loop and the accept handlers that spread connections by it.

    Each loop calls :meth:`attach` on its own thread with its server; from
    then on its sockets are accepted through :meth:`_accept`. Loads change
    under one lock: once per connection and twice per request, uncontended
    most of the time.
    """

    def __init__(self, loops: int) -> None:
        self._lock = threading.Lock()
        self.loads = [0] * loops
        self._servers: list[Optional[Any]] = [None] * loops
        self._ioloops: list[Optional[tornado.ioloop.IOLoop]] = [None] * loops

    def attach(self, index: int, server: "LoadCountingServer",
               sockets: list[socket.socket]) -> None:
        """Serve ``sockets`` with ``server`` on loop ``index`` (call it on that loop)."""
        server.count_load_for(self, index)
        self._servers[index] = server
        self._ioloops[index] = tornado.ioloop.IOLoop.current()
        for sock in sockets:
            server.adopt_socket(sock, self._accept_handler(index, sock))

    def detach(self, index: int) -> None:
        """Loop ``index`` stops serving: give it no more connections."""
        with self._lock:
            self._servers[index] = None
            self._ioloops[index] = None

    def change(self, index: int, delta: int) -> None:
        with self._lock:
            self.loads[index] += delta

    def _choose(self, here: int) -> int:
        """The loop with the least load (``here`` on a tie); its load goes up by one."""
        with self._lock:
            best = here
            for index, load in enumerate(self.loads):
                if self._servers[index] is not None and load < self.loads[best]:
                    best = index
            self.loads[best] += 1
            return best

    def _accept_handler(self, here: int, sock: socket.socket) -> Callable[[], None]:
        ioloop = tornado.ioloop.IOLoop.current()
        removed = False

        def accept(fd: Any, events: int) -> None:
            for _ in range(ACCEPTS_PER_WAKEUP):
                if removed:
                    return
                try:
                    connection, address = sock.accept()
                except BlockingIOError:
                    return
                except ConnectionAbortedError:
                    continue
                self._give(here, connection, address)

        def remove() -> None:
            nonlocal removed
            removed = True
            ioloop.remove_handler(sock)

        ioloop.add_handler(sock, accept, tornado.ioloop.IOLoop.READ)
        return remove

    def _give(self, here: int, connection: socket.socket, address: Any) -> None:
        target = self._choose(here)
        server, ioloop = self._servers[target], self._ioloops[target]
        if target != here and server is not None and ioloop is not None:
            try:
                ioloop.add_callback(server.take_connection, connection, address)
                return
            except RuntimeError:   # that loop closed meanwhile: keep it here
                self.change(target, -1)
                self.change(here, +1)
        own = self._servers[here]
        if own is None:            # this loop is stopping too: nobody will serve it
            self.change(here, -1)
            connection.close()
            return
        own.take_connection(connection, address)


class LoadCountingServer:
    """A mixin for Tornado's ``HTTPServer`` that keeps its loop's load up to date.

    ``balance`` stays None on a single loop, and then nothing is counted.
    """

    balance: Optional[tuple[ConnectionBalancer, int]] = None

    def count_load_for(self, balancer: ConnectionBalancer, index: int) -> None:
        self.balance = (balancer, index)
        self._fresh: set[Any] = set()   # streams whose first request has not begun
        self._streamed = False

    def adopt_socket(self, sock: socket.socket, remove: Callable[[], None]) -> None:
        """Take ``sock`` as ``TCPServer.add_sockets`` does, with the balancer's accept handler."""
        self._sockets[sock.fileno()] = sock    # type: ignore[attr-defined]
        self._handlers[sock.fileno()] = remove  # type: ignore[attr-defined]

    def take_connection(self, connection: socket.socket, address: Any) -> None:
        """Serve a connection the balancer counted for this loop."""
        self._streamed = False
        self._handle_connection(connection, address)  # type: ignore[attr-defined]
        if not self._streamed:  # closed before it became a stream (a failed TLS wrap)
            self._change_load(-1)

    def handle_stream(self, stream: Any, address: Any) -> None:
        if self.balance is not None:
            self._streamed = True
            self._fresh.add(stream)
        super().handle_stream(stream, address)  # type: ignore[misc]

    def start_request(self, server_conn: Any,
                      request_conn: tornado.httputil.HTTPConnection) -> Any:
        return self.count_request(
            super().start_request(server_conn, request_conn), server_conn)  # type: ignore[misc]

    def count_request(self, delegate: Any, server_conn: Any) -> Any:
        """``delegate``, counted in the load until its handler has run."""
        if self.balance is None:
            return delegate
        stream = getattr(server_conn, "stream", None)
        if stream in self._fresh:
            self._fresh.discard(stream)   # counted since it was accepted
        else:
            self._change_load(+1)
        return _CountedRequest(delegate, self._change_load)

    def on_close(self, server_conn: Any) -> None:
        super().on_close(server_conn)  # type: ignore[misc]
        stream = getattr(server_conn, "stream", None)
        if self.balance is not None and stream in self._fresh:
            self._fresh.discard(stream)
            self._change_load(-1)

    def stop(self) -> None:
        if self.balance is not None:
            balancer, index = self.balance
            balancer.detach(index)
        super().stop()  # type: ignore[misc]

    def _change_load(self, delta: int) -> None:
        assert self.balance is not None
        balancer, index = self.balance
        balancer.change(index, delta)


class _CountedRequest(tornado.httputil.HTTPMessageDelegate):
    """A request's delegate that ends its count when the handler has run (or the peer left).

    A synchronous handler runs inside ``finish``; an ``async def`` handler
    stops counting at its first ``await``, when its loop is free again.
    """

    __slots__ = ("_inner", "_change", "_counted")

    def __init__(self, inner: tornado.httputil.HTTPMessageDelegate,
                 change: Callable[[int], None]) -> None:
        self._inner = inner
        self._change = change
        self._counted = True

    def headers_received(self, start_line: Any, headers: Any) -> Any:
        return self._inner.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Any:
        return self._inner.data_received(chunk)

    def finish(self) -> None:
        try:
            self._inner.finish()
        finally:
            self._uncount()

    def on_connection_close(self) -> None:
        try:
            self._inner.on_connection_close()
        finally:
            self._uncount()

    def _uncount(self) -> None:
        if self._counted:
            self._counted = False
            self._change(-1)
