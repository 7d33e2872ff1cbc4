"""Start ``tornado-stm serve`` on the fault apps, and speak raw HTTP to it with bounded waits."""

from __future__ import annotations

import os
import socket
import sys
import time

from testsupport.serverproc import ServerProcess, free_port, start_server

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def env() -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}


def start(tmp_dir: str, *options: str, target: str = "fault_app:make_app",
          name: str = "serve", prefix: tuple[str, ...] = ()) -> ServerProcess:
    """``tornado-stm serve TARGET`` on a free loopback port, answering /hello.

    ``prefix`` replaces ``-m tornado_stm`` (a wrapper script taking the same arguments).
    """
    port = free_port()
    argv = [sys.executable, *(prefix or ("-m", "tornado_stm")), "serve", target,
            "--port", str(port), *options]
    own = target.endswith(":main")     # Tornado's main() shape listens by itself
    if own:
        argv = [sys.executable, *(prefix or ("-m", "tornado_stm")), "serve", target,
                *options, "--", f"--listen-port={port}"]
    return start_server(argv, port, os.path.join(tmp_dir, f"{name}.out"), cwd=HERE,
                        probe="/hello", env=env())


def send_get(port: int, path: str, timeout: float = 10.0,
             keep_alive: bool = True) -> socket.socket:
    """Open a connection and send ``GET path`` on it; the caller reads and closes."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    connection = "keep-alive" if keep_alive else "close"
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: {connection}\r\n\r\n".encode())
    return sock


def read_response(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """What the server sends until it has sent one whole response or closes (b"" = closed)."""
    sock.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            length = [line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")]
            if length and len(body) >= int(length[0]):
                return data
    raise TimeoutError(f"no whole response within {timeout}s: {data[:200]!r}")


def get(port: int, path: str, timeout: float = 10.0) -> bytes:
    """One request on a new connection; b"" when refused or closed without an answer."""
    try:
        with send_get(port, path, timeout, keep_alive=False) as sock:
            return read_response(sock, timeout)
    except (ConnectionRefusedError, ConnectionResetError, BrokenPipeError):
        return b""
