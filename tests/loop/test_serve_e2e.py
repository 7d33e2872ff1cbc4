"""``tornado-stm serve`` against stock Tornado, over real HTTP on loopback.

One server of each kind serves tests/loop/e2e_app.py for the whole module;
every answer of ``tornado-stm serve`` must equal stock Tornado's, header
for header (less those that carry the time) and byte for byte.
"""

from __future__ import annotations

import asyncio
import collections
import gzip
import http.client
import json
import socket
import time
from typing import Iterable, Optional

import pytest
import tornado.httpclient
import tornado.websocket

from tests.conftest import FREE_THREADED
from tests.loop.servers import start_stm_server, start_stock_server

#: Headers that differ between two correct servers (time, random signing).
VOLATILE_HEADERS = {"date", "set-cookie", "last-modified", "expires"}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory):
    tmp = str(tmp_path_factory.mktemp("e2e"))
    stm = start_stm_server("e2e_app:make_app", tmp, "--threads", "2", probe="/hello")
    try:
        stock = start_stock_server("e2e_app.py", tmp, probe="/hello")
    except BaseException:
        stm.stop()
        raise
    try:
        yield stm, stock
    finally:
        stm.stop()
        stock.stop()


def exchange(port: int, method: str, path: str, body: Optional[bytes | Iterable[bytes]] = None,
             headers: Optional[dict] = None, chunked: bool = False) -> tuple[int, dict, bytes]:
    """One request on a fresh connection: (status, comparable headers, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {}, encode_chunked=chunked)
        response = connection.getresponse()
        content = response.read()
        if response.getheader("Content-Encoding") == "gzip":
            # The gzip header carries the second it was compressed in: the
            # two servers' answers differ there when a second ticks between.
            content = gzip.decompress(content)
        return response.status, comparable(response.getheaders()), content
    finally:
        connection.close()


def comparable(headers: list[tuple[str, str]]) -> dict:
    kept = {name.lower(): value for name, value in headers if name.lower() not in VOLATILE_HEADERS}
    kept["set-cookie names"] = sorted(value.split("=", 1)[0] for name, value in headers
                                      if name.lower() == "set-cookie")
    return kept


def both(servers, *args, **kwargs) -> tuple:
    stm, stock = servers
    return exchange(stm.port, *args, **kwargs), exchange(stock.port, *args, **kwargs)


@pytest.mark.parametrize("method,path,body,headers", [
    ("GET", "/hello", None, None),
    ("POST", "/hello", b"name=ann", {"Content-Type": "application/x-www-form-urlencoded"}),
    ("GET", "/chunked", None, None),
    ("GET", "/chunked", None, {"Accept-Encoding": "gzip"}),
    ("GET", "/redirect", None, None),
    ("GET", "/cookies", None, {"Cookie": "visits=41"}),
    ("GET", "/static/site.css", None, None),
    ("GET", "/static/lines.txt", None, {"Accept-Encoding": "gzip"}),
    ("GET", "/static/lines.txt", None, {"Range": "bytes=100-199"}),
    ("GET", "/static/lines.txt?v=1", None, {"If-None-Match": '"nope"'}),
    ("GET", "/no/such/page", None, None),
    ("GET", "/broken", None, None),
    ("DELETE", "/hello", None, None),
    ("GET", "/slow/1", None, None),
])
def test_answers_equal_stock_tornado(servers, method, path, body, headers) -> None:
    stm_answer, stock_answer = both(servers, method, path, body, headers)
    assert stm_answer == stock_answer
    assert stm_answer[0] in (200, 206, 302, 404, 405, 500)


def test_status_codes_are_the_usual_ones(servers) -> None:
    stm, _ = servers
    assert exchange(stm.port, "GET", "/no/such/page")[0] == 404
    status, _, body = exchange(stm.port, "GET", "/broken")
    assert status == 500 and b"Internal Server Error" in body
    # ...and the server keeps serving after a broken handler.
    assert exchange(stm.port, "GET", "/hello")[2] == b"Hello, world\n"


def test_chunked_response_is_chunked(servers) -> None:
    stm, _ = servers
    status, headers, body = exchange(stm.port, "GET", "/chunked")
    assert status == 200 and headers.get("transfer-encoding") == "chunked"
    assert body == b"".join(f"chunk {i}\n".encode() * 100 for i in range(5))


def test_static_etag_gives_304(servers) -> None:
    stm, stock = servers
    _, headers, _ = exchange(stm.port, "GET", "/static/site.css")
    stm_answer, stock_answer = both(servers, "GET", "/static/site.css",
                                    headers={"If-None-Match": headers["etag"]})
    assert stm_answer[0] == 304 and stm_answer == stock_answer


def test_streamed_request_body(servers) -> None:
    pieces = [bytes([i % 251]) * 10_000 for i in range(20)]
    stm_answer, stock_answer = both(servers, "PUT", "/upload", body=pieces, chunked=True)
    assert stm_answer == stock_answer
    assert json.loads(stm_answer[2]) == {"received": 200_000, "streamed": True,
                                         "checksum": sum(sum(p) for p in pieces) % 1_000_003}


def test_keep_alive_reuses_one_connection(servers) -> None:
    stm, stock = servers
    bodies = {}
    for server in (stm, stock):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        try:
            answers = []
            for path in ["/hello", "/cookies", "/static/site.css", "/no/such/page", "/hello"]:
                connection.request("GET", path)
                if not answers:
                    first_socket = connection.sock
                response = connection.getresponse()
                answers.append((response.status, response.read()))
                assert connection.sock is first_socket, "the server closed a keep-alive connection"
            bodies[server.port] = answers
        finally:
            connection.close()
    assert bodies[stm.port] == bodies[stock.port]


def test_redirect_followed_by_a_client(servers) -> None:
    async def fetch(port: int) -> tuple[int, bytes, str]:
        client = tornado.httpclient.AsyncHTTPClient()
        response = await client.fetch(f"http://127.0.0.1:{port}/redirect", follow_redirects=True)
        return response.code, response.body, response.effective_url.split(str(port))[1]

    stm, stock = servers
    assert asyncio.run(fetch(stm.port)) == asyncio.run(fetch(stock.port)) == (
        200, b"Hello, world\n", "/hello?from=redirect")


def test_websocket_echo(servers) -> None:
    async def talk(port: int) -> list:
        connection = await tornado.websocket.websocket_connect(f"ws://127.0.0.1:{port}/ws")
        heard = []
        for message in ["hello", "ünïcode", b"\x00\x01binary"]:
            await connection.write_message(message, binary=isinstance(message, bytes))
            heard.append(await connection.read_message())
        connection.close()
        return heard

    stm, stock = servers
    heard = asyncio.run(talk(stm.port))
    assert heard == ["echo: hello", "echo: ünïcode", b"yranib\x01\x00"]
    assert heard == asyncio.run(talk(stock.port))


def test_two_hundred_concurrent_clients(servers) -> None:
    paths = [("/hello", "/slow/1", "/cookies", "/static/site.css")[i % 4] for i in range(200)]

    async def fetch_all(port: int) -> list[tuple[int, bytes]]:
        client = tornado.httpclient.AsyncHTTPClient(force_instance=True, max_clients=200)
        try:
            responses = await asyncio.gather(*(
                client.fetch(f"http://127.0.0.1:{port}{path}", raise_error=False,
                             request_timeout=120, connect_timeout=60)
                for path in paths))
        finally:
            client.close()
        return [(r.code, r.body if not r.request.url.endswith("/cookies") else b"")
                for r in responses]

    stm, stock = servers
    stm_answers = asyncio.run(fetch_all(stm.port))
    assert [code for code, _ in stm_answers] == [200] * 200
    assert stm_answers == asyncio.run(fetch_all(stock.port))


@pytest.mark.freethreaded
def test_sections_that_give_the_world_lock_up_overlap(servers) -> None:
    """Handlers whose section leaves W run at the same time on two threads."""
    stm, _ = servers

    async def load(port: int) -> list[int]:
        client = tornado.httpclient.AsyncHTTPClient(force_instance=True, max_clients=8)
        try:
            responses = await asyncio.gather(*(
                client.fetch(f"http://127.0.0.1:{port}/parallel/30000", request_timeout=120)
                for _ in range(8)))
        finally:
            client.close()
        return [json.loads(r.body)["primes"] for r in responses]

    assert asyncio.run(load(stm.port)) == [3245] * 8
    spans = json.loads(exchange(stm.port, "GET", "/spans")[2])["spans"]
    threads = {name for _, _, name in spans}
    overlapping = sum(1 for a in spans for b in spans
                      if a is not b and a[0] < b[1] and b[0] < a[1])
    assert len(threads) == 2, spans
    assert overlapping > 0, spans


def test_a_burst_of_connections_is_spread_over_the_loops(servers) -> None:
    """Eight connections opened together while both loops are idle: each loop serves some.

    The connections are all open before any request is sent, so they wait
    in the listening socket's queue together. Tornado's accept handler
    takes every waiting connection in one wake-up: without the balancer
    (tornado_stm.loop.balance) the first loop to wake kept the whole burst
    and served it alone, one request after another.
    """
    stm, _ = servers
    connections = [http.client.HTTPConnection("127.0.0.1", stm.port, timeout=60)
                   for _ in range(8)]
    for connection in connections:
        connection.connect()
    time.sleep(0.3)   # every connection accepted (by whichever loop) before a request
    for connection in connections:
        connection.request("GET", "/busy/3")
    served = collections.Counter()
    for connection in connections:
        response = connection.getresponse()
        assert response.status == 200
        served[json.loads(response.read())["thread"]] += 1
        connection.close()
    assert len(served) == 2 and min(served.values()) >= 2, served


@pytest.mark.parametrize("raw", [
    b"GARBAGE\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n",
    b"POST /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
])
def test_malformed_requests_answered_as_stock_and_server_keeps_serving(servers, raw) -> None:
    def send_raw(port: int) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            client.sendall(raw)
            answer = b""
            while True:
                data = client.recv(4096)
                if not data:
                    return answer.split(b"\r\n", 1)[0]  # the status line, if any
                answer += data

    stm, stock = servers
    assert send_raw(stm.port) == send_raw(stock.port)
    assert exchange(stm.port, "GET", "/hello")[2] == b"Hello, world\n"
