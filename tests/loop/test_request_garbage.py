"""A served request leaves no cyclic garbage: its objects die with their last reference.

A section's transaction held what undoes the attempt and the response it
held back (``response._Recording``), which referred back to the
transaction: every request's handler, request and headers waited for the
cyclic collector, a stop-the-world pass over the whole heap on the
free-threaded build. An aborted attempt's transaction kept its held
response the same way, so the requests run under forced aborts too. The
serial backend is the control: the same requests through Tornado's own path.
"""

from __future__ import annotations

import http.client
import json

import pytest

from tests.loop.servers import start_stm_server

REQUESTS = 300


def _get(connection: http.client.HTTPConnection, path: str) -> bytes:
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    assert response.status == 200, (path, response.status, body)
    return body


#: Forced aborts: about one attempt in twenty is thrown away and retried.
FORCED_ABORTS = {"TORNADO_STM_FAULTS": "abort=0.05"}


@pytest.mark.parametrize("options, env", [
    (("--loop", "per-thread"), {}), (("--loop", "shared"), {}),
    (("--loop", "shared"), FORCED_ABORTS), (("--backend", "serial"), {})])
def test_hello_requests_leave_no_cyclic_garbage(tmp_path, options, env) -> None:
    server = start_stm_server("garbage_app:make_app", str(tmp_path), "--threads", "2", *options,
                              env=env)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        _get(connection, "/garbage/start")
        for _ in range(REQUESTS):
            assert _get(connection, "/") == b"Hello, world"
        report = json.loads(_get(connection, "/garbage"))
        connection.close()
    finally:
        assert server.stop() == 0, server.output_tail()
    # What the counting requests themselves leave is a handful, not one per request.
    assert report["objects"] < REQUESTS // 10, report


def test_only_what_a_cycle_keeps_counts_as_cyclic_garbage() -> None:
    """Objects freed by reference count (free-threaded CPython's collector may find
    them first, while their refcount waits to be merged) are not cyclic garbage."""
    from tests.loop.garbage_app import kept_by_cycles

    last: list = []
    chain = [[[last]], [last], last]                 # lists referring on, no cycle
    hanging: list = []
    ring: list = [hanging]
    ring.append([ring])                              # ring -> [ring]: a cycle
    garbage = [*chain, ring, ring[1], hanging]
    kept = kept_by_cycles(garbage)
    assert {id(item) for item in kept} == {id(ring), id(ring[1]), id(hanging)}
