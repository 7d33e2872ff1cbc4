"""Where ``tornado-stm serve`` listens: addresses, inherited sockets, TLS and proxies.

The command line names endpoints in the usual ways (``--host`` and
``--port``, ``--bind HOST:PORT`` / ``[::1]:PORT`` / ``unix:PATH`` /
``fd://N``, ``--fd N``); :func:`bind` turns them into listening sockets
*before* anything is printed, so that the banner shows the real port
(``--port 0``) and a port in use is one line of error instead of a
banner followed by one. The sockets are handed to Tornado's
``HTTPServer.add_sockets`` by :meth:`Listeners.start_server`, with the TLS
context (``--certfile``/``--keyfile``) and Tornado's ``xheaders``
(``--proxy-headers``), restricted to the peers of ``--forwarded-allow-ips``.

An application that listens by itself (Tornado's ``main()``: ``app.listen``)
keeps its own ``HTTPServer`` configuration, but :func:`take_over` moves its
sockets into :class:`Listeners` too, so that every event loop accepts on
them. A reload (Tornado's autoreload re-executes the process) keeps the
sockets bound here: :func:`keep_on_reload` hands them to the new process as
inherited descriptors, so ``--port 0`` keeps its port and no connection is
refused in between.
"""

from __future__ import annotations

import argparse
import functools
import ipaddress
import json
import logging
import os
import socket
import ssl
import stat
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

import tornado.httpserver
import tornado.httputil
import tornado.netutil
import tornado.tcpserver

from tornado_stm.loop.balance import ConnectionBalancer, LoadCountingServer

logger = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_FORWARDED_ALLOW_IPS = "127.0.0.1,::1"

#: How a reloading process tells the process it becomes which descriptors to
#: listen on (set just before the exec, read and removed at start-up).
RELOAD_FDS_VARIABLE = "TORNADO_STM_RELOAD_FDS"


class BindError(Exception):
    """An endpoint that cannot be listened on, or bad TLS files; one line for the user."""


@dataclass(frozen=True)
class Endpoint:
    """One place to listen: a TCP host and port, a Unix socket path, or an inherited fd."""

    kind: str                   # "tcp", "unix" or "fd"
    host: str = ""              # "" is every interface
    port: Optional[int] = None  # None: the --port value
    path: str = ""              # unix; for an fd, the file of a Unix socket we bound
    fd: int = -1

    @property
    def own_file(self) -> str:
        """The socket file this server made (and removes on a clean stop), or ""."""
        return self.path   # a TCP endpoint has none, an inherited socket only if ours

    def describe(self, default_port: int) -> str:
        if self.kind == "unix":
            return f"unix:{self.path}"
        if self.kind == "fd":
            return f"fd {self.fd}"
        port = default_port if self.port is None else self.port
        host = f"[{self.host}]" if ":" in self.host else (self.host or "*")
        return f"{host}:{port}"


# -- argparse types: each raises ArgumentTypeError with the problem in a few words

def whole_number(text: str, what: str, low: int | None = None, high: int | None = None,
                 bounds: str = "") -> int:
    """``text`` as an int in ``low..high`` (each optional), or ArgumentTypeError
    naming ``what`` it is not."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"{value} is not {what}{bounds}")
    return value


def port_number(text: str) -> int:
    return whole_number(text, "a port number", 0, 65535, " (0 to 65535)")


def fd_number(text: str) -> int:
    return whole_number(text, "a file descriptor number", 0)


def host_name(text: str) -> str:
    host = text.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if any(char.isspace() for char in host) or "/" in host:
        raise argparse.ArgumentTypeError(f"{text!r} is not a host name or address")
    return host


def bind_spec(text: str) -> Endpoint:
    """``HOST``, ``HOST:PORT``, ``[IPV6]:PORT``, ``:PORT``, ``unix:PATH`` or ``fd://N``."""
    if text.startswith("unix:"):
        path = text[len("unix:"):]
        if not path:
            raise argparse.ArgumentTypeError(f"{text!r} names no path (unix:PATH)")
        return Endpoint("unix", path=os.path.abspath(path))
    if text.startswith("fd://"):
        return Endpoint("fd", fd=fd_number(text[len("fd://"):]))
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise argparse.ArgumentTypeError(f"{text!r} is not [IPV6]:PORT")
        return Endpoint("tcp", host=host, port=port_number(rest[1:]) if rest else None)
    if text.count(":") > 1:   # a bare IPv6 address
        return Endpoint("tcp", host=host_name(text))
    host, colon, port = text.partition(":")
    return Endpoint("tcp", host=host_name(host) if host else "",
                    port=port_number(port) if colon else None)


class TrustedPeers:
    """The peers whose X-Forwarded-For / X-Real-Ip / X-Scheme headers are believed.

    A comma-separated list of addresses and networks (``10.0.0.0/8``), or
    ``*`` for every peer. A peer on a Unix socket is always trusted: only a
    local process (a reverse proxy) can reach it.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.everyone = False
        self.networks: list[Union[ipaddress.IPv4Network, ipaddress.IPv6Network]] = []
        for item in text.replace(" ", ",").split(","):
            if not item:
                continue
            if item == "*":
                self.everyone = True
                continue
            try:
                self.networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"{item!r} is not an IP address or network (or *)") from None

    def allows(self, context: Any) -> bool:
        if self.everyone or getattr(context, "address_family", None) == socket.AF_UNIX:
            return True
        try:
            peer = ipaddress.ip_address(getattr(context, "remote_ip", ""))
        except ValueError:
            return False
        if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
            peer = peer.ipv4_mapped
        return any(peer in network for network in self.networks)


def trusted_peers(text: str) -> TrustedPeers:
    """The argparse type of ``--forwarded-allow-ips``."""
    return TrustedPeers(text)


class ProxyHeadersHTTPServer(LoadCountingServer, tornado.httpserver.HTTPServer):
    """Tornado's HTTPServer with ``xheaders`` applied only to trusted peers.

    Tornado applies ``xheaders`` to every connection; behind a proxy that
    lets a client reaching the server directly claim any address. A request
    from an untrusted peer goes straight to the application, as with
    ``xheaders=False``.
    """

    def initialize(self, *args: Any, trusted: Optional[TrustedPeers] = None,
                   **kwargs: Any) -> None:
        super().initialize(*args, **kwargs)
        self.trusted = trusted

    def start_request(self, server_conn: object,
                      request_conn: tornado.httputil.HTTPConnection) -> Any:
        context = getattr(request_conn, "context", None)
        if self.trusted is not None and not self.trusted.allows(context):
            assert isinstance(self.request_callback, tornado.httputil.HTTPServerConnectionDelegate)
            return self.count_request(
                self.request_callback.start_request(server_conn, request_conn), server_conn)
        return super().start_request(server_conn, request_conn)


@dataclass
class Listeners:
    """Bound sockets and how to serve them."""

    sockets: list[socket.socket]             # loop 0's, the ones the banner names
    ssl_context: Optional[ssl.SSLContext] = None
    trusted: Optional[TrustedPeers] = None   # None: no proxy headers
    per_loop: Optional[list[list[socket.socket]]] = None   # bind_per_loop's sets
    #: The application's own server these sockets were taken from (take_over):
    #: each loop's server is configured like it. None: serve's own sockets.
    like: Optional[tornado.httpserver.HTTPServer] = None
    servers: list[tornado.httpserver.HTTPServer] = field(default_factory=list)
    balancer: Optional[ConnectionBalancer] = None          # more than one loop

    def __post_init__(self) -> None:
        if self.per_loop is not None and len(self.per_loop) > 1:
            self.balancer = ConnectionBalancer(len(self.per_loop))

    def start_server(self, delegate: Any, index: int = 0) -> tornado.httpserver.HTTPServer:
        """An HTTPServer for ``delegate`` on loop ``index``'s sockets; call it on that loop."""
        server: Any   # an HTTPServer with the LoadCountingServer mixin, either way
        if self.like is not None:
            server = server_like(self.like, delegate)
        else:
            server = ProxyHeadersHTTPServer(delegate, ssl_options=self.ssl_context,
                                            xheaders=self.trusted is not None,
                                            trusted=self.trusted)
        if self.balancer is not None and self.per_loop is not None:
            # Connections go to the least busy loop (tornado_stm.loop.balance).
            self.balancer.attach(index, server, self.per_loop[index],
                                 in_flight=_in_flight_counter(delegate))
        else:
            server.add_sockets(self.per_loop[index] if self.per_loop else self.sockets)
        self.servers.append(server)
        return server

    def urls(self) -> list[str]:
        scheme = "https" if self.ssl_context is not None else "http"
        return [socket_url(sock, scheme) for sock in self.sockets]

    def close(self) -> None:
        for group in self.per_loop or [self.sockets]:
            for sock in group:
                sock.close()


def take_over(server: tornado.httpserver.HTTPServer, loops: int) -> Optional[Listeners]:
    """The listening sockets of an application's own ``server`` (``app.listen``), for
    ``loops`` event loops to accept on; None when it has none.

    ``app.listen`` ran on one loop, so only that loop would accept. The
    server stops polling its sockets (it stays the application's object,
    with nothing to accept), and each loop serves them through a server
    configured like it (:func:`server_like`), as serve's own sockets are.
    Call it before the loops run.
    """
    own = server._sockets  # type: ignore[attr-defined]
    handlers = server._handlers  # type: ignore[attr-defined]
    sockets = list(own.values())
    if not sockets:
        return None
    for remove in handlers.values():
        remove()
    own.clear()
    handlers.clear()
    return Listeners(sockets, like=server, per_loop=share_per_loop(sockets, loops))


@functools.cache
def _load_counting(cls: type) -> type:
    """``cls`` (an HTTPServer class) with the balancer's :class:`LoadCountingServer` mixed in."""
    if issubclass(cls, LoadCountingServer):
        return cls
    return type(f"LoadCounting{cls.__name__}", (LoadCountingServer, cls), {})


def server_like(original: tornado.httpserver.HTTPServer, delegate: Any) -> LoadCountingServer:
    """A new server for ``delegate``, configured as ``original`` (its TLS, ``xheaders``,
    limits and subclass), with no sockets or connections yet.

    Tornado keeps a server's settings only in the attributes ``initialize``
    computed from them, so they are copied; the per-server state is then
    made afresh by ``TCPServer.__init__``.
    """
    server = object.__new__(_load_counting(type(original)))
    server.__dict__.update(original.__dict__)
    tornado.tcpserver.TCPServer.__init__(server, ssl_options=original.ssl_options,
                                         max_buffer_size=original.max_buffer_size,
                                         read_chunk_size=original.read_chunk_size)
    server._connections = set()     # type: ignore[attr-defined]
    server.request_callback = delegate   # type: ignore[attr-defined]
    return server


def _in_flight_counter(delegate: Any) -> Callable[[], int]:
    """How the balancer reads a loop's requests in flight: serve's delegate counts them."""
    return lambda: getattr(delegate, "count", 0)


def socket_url(sock: socket.socket, scheme: str = "http") -> str:
    """``http://127.0.0.1:8888/``, ``http://[::1]:8888/``, or ``unix:/run/app.sock``."""
    if sock.family == socket.AF_UNIX:
        return f"unix:{_unix_path(sock)}"
    name = sock.getsockname()
    host, port = name[0], name[1]
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}/"


def tls_context(certfile: Optional[str], keyfile: Optional[str]) -> Optional[ssl.SSLContext]:
    """The server's TLS context, or None without ``--certfile``."""
    if keyfile and not certfile:
        raise BindError(f"--keyfile {keyfile}: needs --certfile (the certificate)")
    if not certfile:
        return None
    for option, path in (("--certfile", certfile), ("--keyfile", keyfile)):
        if path and not os.access(path, os.R_OK):
            why = "no such file" if not os.path.exists(path) else "not readable"
            raise BindError(f"{option} {path}: {why}")

    def no_password() -> str:
        # Otherwise OpenSSL would prompt on the terminal for an encrypted key.
        raise BindError(f"{'--keyfile ' + keyfile if keyfile else '--certfile ' + certfile}: "
                        "the private key is encrypted (give an unencrypted key)")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.set_alpn_protocols(["http/1.1"])
    try:
        context.load_cert_chain(certfile, keyfile, password=no_password)
    except ssl.SSLError as exc:
        files = f"--certfile {certfile}" + (f" --keyfile {keyfile}" if keyfile else "")
        reason = exc.reason or str(exc)
        if "KEY_VALUES_MISMATCH" in str(exc):
            reason = "the private key does not match the certificate"
        elif reason in ("PEM_LIB", "NO_START_LINE") or "PEM" in str(exc):
            reason = "not a PEM certificate and private key"
        raise BindError(f"{files}: {reason}") from None
    return context


def endpoints(hosts: Optional[list[str]], binds: Optional[list[Endpoint]],
              fds: Optional[list[int]]) -> list[Endpoint]:
    """Every endpoint asked for: ``--host`` (127.0.0.1 unless --bind or --fd is given),
    then ``--bind``, then ``--fd``."""
    result: list[Endpoint] = []
    if hosts or not (binds or fds):
        result += [Endpoint("tcp", host=host) for host in (hosts or [DEFAULT_HOST])]
    result += list(binds or [])
    result += [Endpoint("fd", fd=fd) for fd in (fds or [])]
    return result


def bind(wanted: list[Endpoint], port: int, *, backlog: int = 1024) -> list[socket.socket]:
    """Listen on every endpoint, or on none (a BindError names the first that failed).

    With ``--port 0`` the kernel picks a port for the first TCP endpoint
    that uses ``--port``, and the others get that same port.
    """
    sockets: list[socket.socket] = []
    try:
        for endpoint in wanted:
            where = endpoint.describe(port)
            try:
                if endpoint.kind == "unix":
                    sockets.append(tornado.netutil.bind_unix_socket(endpoint.path,
                                                                   backlog=backlog))
                elif endpoint.kind == "fd":
                    sockets.append(_inherited(endpoint.fd, backlog))
                else:
                    bound = tornado.netutil.bind_sockets(
                        port if endpoint.port is None else endpoint.port,
                        address=endpoint.host or None, backlog=backlog)
                    if endpoint.port is None and port == 0 and bound:
                        port = bound[0].getsockname()[1]
                    sockets += bound
            except BindError:
                raise
            except (OSError, ValueError) as exc:
                why = getattr(exc, "strerror", None) or str(exc)
                raise BindError(f"cannot listen on {where}: {why}") from None
    except BindError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def bind_per_loop(wanted: list[Endpoint], port: int, loops: int, *,
                  backlog: int = 1024) -> list[list[socket.socket]]:
    """The listening sockets of each of ``loops`` event loops.

    Every loop accepts from the same sockets, each through a descriptor of
    its own (``dup``), since each loop's server closes its descriptors when
    it stops. One socket polled by every loop, rather than one
    ``SO_REUSEPORT`` socket per loop, because only a loop that is polling
    accepts: a loop busy with a long handler takes no new connection, where
    the kernel's ``SO_REUSEPORT`` spreading would queue some behind it (and
    hello world measured no slower).
    """
    return share_per_loop(bind(wanted, port, backlog=backlog), loops)


def share_per_loop(first: list[socket.socket], loops: int) -> list[list[socket.socket]]:
    """``first`` for loop 0 and a ``dup`` of each for every other loop."""
    sets = [first]
    try:
        for _ in range(loops - 1):
            sets.append([_dup(sock) for sock in first])
    except OSError as exc:
        for group in sets:
            for sock in group:
                sock.close()
        raise BindError(f"cannot listen on {socket_url(first[0])} again for another loop: "
                        f"{exc.strerror or exc}") from None
    return sets


def keep_on_reload(wanted: list[Endpoint], sockets: list[socket.socket]) -> None:
    """When the process reloads, the process it becomes listens on these very ``sockets``.

    Tornado's autoreload re-executes the command line, which binds again:
    ``--port 0`` would get another port, and connections arriving in
    between be refused. So a reload hook, just before the exec, makes the
    descriptors inheritable and names them in :data:`RELOAD_FDS_VARIABLE`
    (see :func:`reloaded_endpoints`), with the file of each Unix socket
    bound here, which stays ours to remove.
    """
    import tornado.autoreload

    own_files = {endpoint.own_file for endpoint in wanted if endpoint.own_file}

    def hand_over() -> None:
        kept = []
        for sock in sockets:
            if sock.fileno() < 0:   # closed: the server was stopping anyway
                continue
            os.set_inheritable(sock.fileno(), True)
            path = _unix_path(sock)
            kept.append([sock.fileno(), path if path in own_files else ""])
        os.environ[RELOAD_FDS_VARIABLE] = json.dumps(kept)

    tornado.autoreload.add_reload_hook(hand_over)


def reloaded_endpoints() -> Optional[list[Endpoint]]:
    """The sockets a reloading process handed over (:func:`keep_on_reload`), or None.

    Read once: the application and its own children do not see the variable.
    """
    text = os.environ.pop(RELOAD_FDS_VARIABLE, None)
    if text is None:
        return None
    return [Endpoint("fd", fd=fd, path=path) for fd, path in json.loads(text)]


def remove_socket_files(wanted: list[Endpoint]) -> None:
    """Remove the files of the Unix sockets this server bound (on a clean stop)."""
    for endpoint in wanted:
        path = endpoint.own_file
        try:
            if path and stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)
        except OSError as exc:  # gone already, or not ours to remove any more
            logger.debug("not removing %s: %s", path, exc)


def _unix_path(sock: socket.socket) -> str:
    if sock.family != socket.AF_UNIX:
        return ""
    name = sock.getsockname()
    return name if isinstance(name, str) else name.decode()


def _dup(sock: socket.socket) -> socket.socket:
    copy = sock.dup()
    copy.setblocking(False)
    return copy


def _inherited(fd: int, backlog: int) -> socket.socket:
    """A listening stream socket made from an inherited descriptor (systemd, a supervisor)."""
    try:
        os.fstat(fd)
    except OSError:
        raise BindError(f"--fd {fd}: not an open file descriptor") from None
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise BindError(f"--fd {fd}: not a socket ({exc.strerror or exc})") from None
    if sock.type != socket.SOCK_STREAM:
        sock.detach()
        raise BindError(f"--fd {fd}: not a stream (TCP or Unix) socket")
    if not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
        name = sock.getsockname()
        if sock.family in (socket.AF_INET, socket.AF_INET6) and name[1] == 0:
            sock.detach()
            raise BindError(f"--fd {fd}: the socket is not bound to an address")
        sock.listen(backlog)
    sock.setblocking(False)
    return sock
