"""Running out of file descriptors: accepting backs off, the log says so once per interval."""

from __future__ import annotations

import os
import socket
import time

from tests.serve_faults.helpers import HERE, get, start


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stream:
        fields = stream.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_emfile_backs_off_and_logs_once_per_interval(tmp_path) -> None:
    server = start(str(tmp_path), "--threads", "2",
                   prefix=(os.path.join(HERE, "limited.py"), "48"))
    clients: list[socket.socket] = []
    try:
        for _ in range(80):  # more than the server can hold
            clients.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        time.sleep(0.5)
        cpu_before, started = _cpu_seconds(server.process.pid), time.monotonic()
        time.sleep(3)
        cpu = (_cpu_seconds(server.process.pid) - cpu_before) / (time.monotonic() - started)
        assert server.process.poll() is None, "the server died"
        for client in clients:
            client.close()
        clients.clear()
        # The server recovers once descriptors are free again.
        deadline = time.monotonic() + 10
        answer = b""
        while time.monotonic() < deadline and not answer.startswith(b"HTTP/1.1 200"):
            answer = get(server.port, "/hello", timeout=5)
            time.sleep(0.2)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:100]
    finally:
        for client in clients:
            client.close()
        server.stop()
    with open(server.output_path, errors="replace") as stream:
        output = stream.read()
    exhausted = [line for line in output.splitlines() if "Too many open files" in line]
    assert 1 <= len(exhausted) <= 3, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    assert cpu < 0.3, f"the server used {cpu:.0%} of a core while out of descriptors"
