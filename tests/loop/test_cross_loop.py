"""Handlers on one loop acting on what another loop owns: shared Tornado events, other requests' streams.

With one loop per thread, a module-level ``tornado.locks.Event`` serves
requests on every loop, and a post handler writes the event streams of
subscribers that other loops accepted. Both used to go wrong on two
threads: the event's waiters left its set in done-callbacks that ran
without W while another loop's ``set()`` iterated it ("Set changed size
during iteration", 500s), and a post wrote into IOStreams another thread
owns (lost events, a stream whose buffer vanished mid-write; long
polls finished twice). Each test
drives a real server with real clients and checks what a serial run
guarantees; the serial backend is the control.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections import Counter

import pytest

from tests.loop.servers import start_stm_server

SETTINGS = {"serial": ("--backend", "serial"), "t2": ("--threads", "2"),
            "t4": ("--threads", "4"),
            "t2-faults": ("--threads", "2")}
FAULTS = {"TORNADO_STM_FAULTS": "abort=0.05,delay=0.0002,seed=5"}


def _server(app: str, tmp_path, setting: str):
    return start_stm_server(app, str(tmp_path), *SETTINGS[setting], probe="/state",
                            env=FAULTS if setting.endswith("faults") else None)


def _ask(connection: http.client.HTTPConnection, method: str, path: str) -> tuple[int, bytes]:
    """One request on a keep-alive connection: (status, body)."""
    connection.request(method, path, body=b"" if method == "POST" else None)
    response = connection.getresponse()
    return response.status, response.read()


def _state(port: int) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    state = json.loads(_ask(connection, "GET", "/state")[1])
    connection.close()
    return state


@pytest.mark.parametrize("setting", ["serial", "t2", "t4", "t2-faults"])
def test_a_shared_tornado_event_wakes_every_waiter_and_never_fails(tmp_path, setting) -> None:
    waiters, seconds = 24, 3.0
    server = _server("tevent_app:make_app", tmp_path, setting)
    answers: Counter = Counter()
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def wait_again_and_again() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        while time.monotonic() < end:
            status, _ = _ask(connection, "GET", "/wait")
            with lock:
                answers["wait", status] += 1

    def pulse() -> None:
        # Pulses go on a second past the waiters, so that the last waits end.
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        while time.monotonic() < end + 1:
            status, _ = _ask(connection, "POST", "/pulse")
            with lock:
                answers["pulse", status] += 1
            time.sleep(0.0005)

    try:
        clients = ([threading.Thread(target=wait_again_and_again) for _ in range(waiters)]
                   + [threading.Thread(target=pulse) for _ in range(2)])
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        state = _state(server.port)
        errors = server.errors()
    finally:
        assert server.stop() == 0, server.output_tail()
    assert set(answers) == {("wait", 200), ("pulse", 200)}, (answers, errors)
    assert state == {"woken": answers["wait", 200], "waits": answers["wait", 200],
                     "sets": answers["pulse", 200], "waiters": 0}, (state, answers)
    assert not errors, errors


@pytest.mark.parametrize("setting", ["serial", "t2", "t4", "t2-faults"])
def test_every_event_stream_gets_every_post_once_in_one_order(tmp_path, setting) -> None:
    subscribers, posters, posts = 8, 4, 100
    server = _server("sse_app:make_app", tmp_path, setting)
    received: list[list[str]] = [[] for _ in range(subscribers)]
    failures: list[str] = []

    def subscribe(index: int) -> None:
        stream = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        stream.sendall(b"GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
        data = b""
        try:
            while b"data: END" not in data:
                chunk = stream.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError as exc:
            failures.append(f"subscriber {index}: {exc!r}")
        finally:
            stream.close()
        body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
        received[index] = [line[6:].decode() for line in body.split(b"\n")
                           if line.startswith(b"data: ")]

    def post(index: int, message: str | None = None) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        for number in range(posts) if message is None else [None]:
            path = f"/post?m={index}-{number}" if message is None else f"/post?m={message}"
            status, _ = _ask(connection, "POST", path)
            if status != 200:
                failures.append(f"{path}: {status}")
        connection.close()

    try:
        listeners = [threading.Thread(target=subscribe, args=(i,)) for i in range(subscribers)]
        for listener in listeners:
            listener.start()
        deadline = time.monotonic() + 10
        while _state(server.port)["open"] < subscribers and time.monotonic() < deadline:
            time.sleep(0.05)
        writers = [threading.Thread(target=post, args=(j,)) for j in range(posters)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        post(0, "END")
        for listener in listeners:
            listener.join(30)
        errors = server.errors()
    finally:
        assert server.stop() == 0, server.output_tail()
    assert not failures, failures
    expected = sorted([f"{j}-{k}" for j in range(posters) for k in range(posts)] + ["END"])
    for messages in received:
        assert sorted(messages) == expected          # each post once, none lost
        assert messages == received[0]               # one serial order for everyone
    assert not errors, errors


@pytest.mark.parametrize("setting", ["serial", "t2", "t4", "t2-faults"])
def test_long_polls_answered_from_another_loop_each_get_one_whole_answer(tmp_path,
                                                                          setting) -> None:
    pollers, posters, posts = 16, 4, 60
    server = _server("longpoll_app:make_app", tmp_path, setting)
    answers: Counter = Counter()
    failures: list[str] = []
    lock = threading.Lock()

    def poll(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        last = 0
        while True:
            status, body = _ask(connection, "GET", "/poll")
            try:
                answer = json.loads(body)
            except ValueError as exc:
                failures.append(f"poller {index}: {status}, not JSON ({exc})")
                return
            with lock:
                answers["got"] += 1
                if answer["n"] <= last:             # posts are numbered in their serial order
                    failures.append(f"poller {index}: {answer} after n={last}")
            last = answer["n"]
            if answer["m"] == "END":
                return

    def post(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        for number in range(posts):
            status, _ = _ask(connection, "POST", f"/post?m={index}-{number}")
            with lock:
                answers["post", status] += 1
            time.sleep(0.001)

    try:
        waiting = [threading.Thread(target=poll, args=(i,)) for i in range(pollers)]
        for poller in waiting:
            poller.start()
        writers = [threading.Thread(target=post, args=(j,)) for j in range(posters)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        deadline = time.monotonic() + 20
        while any(p.is_alive() for p in waiting) and time.monotonic() < deadline:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            _ask(connection, "POST", "/post?m=END")
            connection.close()
            time.sleep(0.05)
        hung = sum(p.is_alive() for p in waiting)
        state = _state(server.port)
        errors = server.errors()
    finally:
        assert server.stop() == 0, server.output_tail()
    assert hung == 0 and not failures, (hung, failures)
    assert answers["post", 200] == posters * posts, answers
    # Every poll was answered once, by one post, and woke its waiter once.
    assert state["polls"] == state["delivered"] == state["woken"] == answers["got"], \
        (state, answers)
    assert state["waiting"] == 0, state
    assert not errors, errors
