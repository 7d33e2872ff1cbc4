"""Which loop of a per-thread server takes a new connection.

Every loop polls the same listening socket, so only a loop that is free
to poll accepts -- but when a burst of connections arrives while all
loops are idle, the first loop to wake would take the whole burst (Tornado
accepts up to 128 connections per wake-up) and serve it alone, one
request after another, while the other cores idle.

So the loop that accepts does not necessarily keep the connection: it
gives it to the loop with the least work waiting, itself on a tie. A
loop's *load* counts

* connections given to it whose first request has not arrived yet,
* requests in flight on it, from their headers to the end of their
  response (what the server's delegate reports, see :meth:`attach`).

Idle keep-alive connections cost nothing and do not count (Tornado asks
for the next request's delegate as soon as a response ends, so the load
is taken from arrived headers, not from that call), and a loop running a
long handler counts one request until it ends, so new connections go
elsewhere. A connection, once given, stays on its loop: its stream,
request and handler are touched by that loop's thread only.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, Callable, Optional

import tornado.httputil
import tornado.ioloop

#: How many connections one wake-up accepts at most; the rest wait for the next.
ACCEPTS_PER_WAKEUP = 64


def _none() -> int:
    return 0


class ConnectionBalancer:
    """The load of every loop and the accept handlers that spread connections by it.

    Each loop calls :meth:`attach` on its own thread with its server; from
    then on its sockets are accepted through the balancer. The counts of
    fresh connections change under one lock, once or twice per connection.
    """

    def __init__(self, loops: int) -> None:
        self._lock = threading.Lock()
        self.fresh = [0] * loops
        self._in_flight: list[Callable[[], int]] = [_none] * loops
        self._servers: list[Optional[Any]] = [None] * loops
        self._ioloops: list[Optional[tornado.ioloop.IOLoop]] = [None] * loops

    def attach(self, index: int, server: "LoadCountingServer", sockets: list[socket.socket],
               in_flight: Callable[[], int] = _none) -> None:
        """Serve ``sockets`` with ``server`` on loop ``index`` (call it on that loop).

        ``in_flight()`` is how many requests that loop is answering (read
        from other threads, racily: a heuristic needs no lock).
        """
        server.count_load_for(self, index)
        self._in_flight[index] = in_flight
        self._servers[index] = server
        self._ioloops[index] = tornado.ioloop.IOLoop.current()
        for sock in sockets:
            server.adopt_socket(sock, self._accept_handler(index, sock))

    def detach(self, index: int) -> None:
        """Loop ``index`` stops serving: give it no more connections."""
        with self._lock:
            self._servers[index] = None
            self._ioloops[index] = None

    def load(self, index: int) -> int:
        return self.fresh[index] + self._in_flight[index]()

    def change(self, index: int, delta: int) -> None:
        """Loop ``index`` has ``delta`` more fresh connections."""
        with self._lock:
            self.fresh[index] += delta

    def _choose(self, here: int) -> int:
        """The loop with the least load (``here`` on a tie); it gets one more fresh connection."""
        with self._lock:
            best, least = here, self.load(here)
            for index in range(len(self.fresh)):
                if self._servers[index] is not None and index != here:
                    load = self.load(index)
                    if load < least:
                        best, least = index, load
            self.fresh[best] += 1
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
    """A mixin for Tornado's ``HTTPServer`` that counts its loop's fresh connections.

    ``balance`` stays None on a single loop, and then nothing is counted.
    """

    balance: Optional[tuple[ConnectionBalancer, int]] = None

    def count_load_for(self, balancer: ConnectionBalancer, index: int) -> None:
        self.balance = (balancer, index)
        self._fresh: set[Any] = set()   # streams whose first request has not arrived
        self._streamed = False

    def adopt_socket(self, sock: socket.socket, remove: Callable[[], None]) -> None:
        """Take ``sock`` as ``TCPServer.add_sockets`` does, with the balancer's accept handler."""
        self._sockets[sock.fileno()] = sock    # type: ignore[attr-defined]
        self._handlers[sock.fileno()] = remove  # type: ignore[attr-defined]

    def take_connection(self, connection: socket.socket, address: Any) -> None:
        """Serve a connection the balancer counted as fresh for this loop."""
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
        """``delegate``, which ends its connection's freshness when its headers arrive."""
        stream = getattr(server_conn, "stream", None)
        if self.balance is None or stream not in self._fresh:
            return delegate
        return _FirstRequest(delegate, lambda: self._no_longer_fresh(stream))

    def on_close(self, server_conn: Any) -> None:
        super().on_close(server_conn)  # type: ignore[misc]
        if self.balance is not None:
            self._no_longer_fresh(getattr(server_conn, "stream", None))

    def stop(self) -> None:
        if self.balance is not None:
            balancer, index = self.balance
            balancer.detach(index)
        super().stop()  # type: ignore[misc]

    def _no_longer_fresh(self, stream: Any) -> None:
        if stream in self._fresh:
            self._fresh.discard(stream)
            self._change_load(-1)

    def _change_load(self, delta: int) -> None:
        assert self.balance is not None
        balancer, index = self.balance
        balancer.change(index, delta)


class _FirstRequest(tornado.httputil.HTTPMessageDelegate):
    """The delegate of a connection's first request: its headers end the freshness.

    From then on the request counts in its loop's requests in flight.
    """

    __slots__ = ("_inner", "_arrived")

    def __init__(self, inner: tornado.httputil.HTTPMessageDelegate,
                 arrived: Callable[[], None]) -> None:
        self._inner = inner
        self._arrived = arrived

    def headers_received(self, start_line: Any, headers: Any) -> Any:
        self._arrived()
        return self._inner.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Any:
        return self._inner.data_received(chunk)

    def finish(self) -> None:
        self._inner.finish()

    def on_connection_close(self) -> None:
        self._arrived()
        self._inner.on_connection_close()
