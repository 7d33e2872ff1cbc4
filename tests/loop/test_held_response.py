"""A handler's response is held back to its commit: optimistic, and sent exactly once.

``self.write``, ``set_status``, ``finish``... used to make a section
inevitable (they were uninstrumented calls with effects). Now they act on
the handler at once and what reaches the connection waits for the commit
(``tornado_stm.loop.response``). These tests serve the booking app with
forced aborts and check, from the outside, that aborted attempts leave
nothing behind: every answer well-formed and consistent with the final
state, each access-log line written once, no section made inevitable by
its response, and aborts really happened.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import subprocess
import sys
from collections import Counter
from urllib.parse import urlencode

import pytest
import tornado.httpclient

from tests.loop import booking_app
from tests.loop.servers import start_stm_server
from tests.loop.test_shared_state import book_concurrently, server_state

REQUESTS = 200
#: Forced aborts, and no limit on retries: a section never turns inevitable
#: after too many aborts, so any inevitable transition would be the response's.
FORCED_ABORTS = {"TORNADO_STM_FAULTS": "abort=0.002,delay=0.0002,seed=5",
                 "TORNADO_STM_MAX_ABORTS": "100000"}


def _stmlog(command: str, path: str) -> str:
    return subprocess.run([sys.executable, "-m", "stmlog_tools", command, path,
                           *(["--json"] if command == "report" else [])],
                          check=True, capture_output=True, text=True).stdout


def _book_under_forced_aborts(tmp_path, path: str, *serve_args: str):
    """Serve the booking app on 2 threads with forced aborts and book REQUESTS
    seats at ``path``; checks the answers and the final state, and returns
    (holders, answers, the server's output, the PYPYSTM log's path)."""
    log_path = str(tmp_path / "booking.pypystm")
    server = start_stm_server("booking_app:make_app", str(tmp_path), "--threads", "2",
                              *serve_args, "--log", log_path, probe="/state",
                              env=FORCED_ABORTS)
    holders = [f"guest-{i}" for i in range(REQUESTS)]
    try:
        responses = asyncio.run(book_concurrently(server.port, holders, path=path))
        state = server_state(server.port)
    finally:
        assert server.stop() == 0, server.output_tail()
    codes = Counter(r.code for r in responses)
    assert codes == {200: booking_app.CAPACITY, 409: REQUESTS - booking_app.CAPACITY}, \
        f"{codes}\nserver errors:\n{server.errors()}"
    assert state["booked"] == booking_app.CAPACITY
    return holders, responses, open(server.output_path).read(), log_path


def assert_aborted_and_only_the_factory_inevitable(log_path: str) -> None:
    report = json.loads(_stmlog("report", log_path))
    assert report["transactions"]["aborted"] > 0, report["transactions"]
    # Only the app factory, run once before serving, is inevitable.
    inevitable = [line for line in _stmlog("dump", log_path).splitlines()
                  if "STM_BECOME_INEVITABLE" in line]
    assert len(inevitable) == 1 and "in make_app" in inevitable[0], inevitable[:5]


@pytest.mark.parametrize("loop", ["per-thread", "shared"])
def test_responses_of_aborted_attempts_are_never_sent(tmp_path, loop) -> None:
    _, responses, output, log_path = _book_under_forced_aborts(tmp_path, "/book", "--loop", loop)
    bodies = [json.loads(r.body) for r in responses]       # one whole JSON answer each
    assert sorted(b["seat"] for b in bodies if "seat" in b) == list(range(booking_app.CAPACITY))
    assert all(b == {"error": "sold out"} for b in bodies if "seat" not in b)
    # 409s are logged at WARNING: one line per answer, none for an aborted attempt.
    refused = REQUESTS - booking_app.CAPACITY
    assert output.count("409 POST /book") == refused, output[-2000:]
    assert_aborted_and_only_the_factory_inevitable(log_path)


def test_a_logged_http_error_is_logged_once_at_the_commit_without_inevitability(tmp_path) -> None:
    """``raise HTTPError(409, "no seat for %s", holder)``: Tornado's warning
    line waits for the commit with the response (an aborted attempt logs
    nothing), and the section stays optimistic."""
    holders, _, output, log_path = _book_under_forced_aborts(tmp_path, "/book-or-raise")
    refused = REQUESTS - booking_app.CAPACITY
    assert len({holder for holder in holders if f"no seat for {holder}\n" in output}) \
        == refused, output[-2000:]
    assert output.count(": no seat for ") == refused, output[-2000:]
    assert_aborted_and_only_the_factory_inevitable(log_path)


FORMS = 60


async def _fetch_forms_and_post_them(port: int) -> tuple[list, list, list]:
    """GET /form FORMS times at once (no cookie), then post each form back
    with its cookie, and once with a wrong token: (pages, good posts, bad posts)."""
    client = tornado.httpclient.AsyncHTTPClient(force_instance=True, max_clients=30)
    url = f"http://127.0.0.1:{port}/form"
    try:
        pages = await asyncio.gather(*(client.fetch(url) for _ in range(FORMS)))
        posts, refused = [], []
        for page in pages:
            token, cookies = _form_token(page), _xsrf_cookies(page)
            cookie = cookies[0] if cookies else ""
            posts.append(client.fetch(url, method="POST", raise_error=False,
                                      headers={"Cookie": f"_xsrf={cookie}"},
                                      body=urlencode({"_xsrf": token})))
        refused.append(await client.fetch(url, method="POST", raise_error=False,
                                          headers={"Cookie": f"_xsrf={cookie}"},
                                          body=urlencode({"_xsrf": "2|00|00|0"})))
        return pages, list(await asyncio.gather(*posts)), refused
    finally:
        client.close()


def _form_token(page) -> str:
    found = re.search(r'name="_xsrf" value="([^"]+)"', page.body.decode())
    assert found, page.body
    return html.unescape(found.group(1))


def _xsrf_cookies(page) -> list[str]:
    return [value.split(";")[0].split("=", 1)[1]
            for value in page.headers.get_list("Set-Cookie") if value.startswith("_xsrf=")]


def test_an_xsrf_form_is_built_optimistically_with_one_token_in_page_and_cookie(tmp_path) -> None:
    """``xsrf_token`` (read for a header) and ``xsrf_form_html()`` make a
    token and set its cookie on the handler's own response: under forced aborts the page and the cookie carry the
    token of the attempt that committed (a retry makes another), the form
    posts back, and no section is made inevitable for it (it was unknown
    Tornado code once: inevitable, with a walk over all the handler
    reaches, about 10x slower on 2 threads)."""
    log_path = str(tmp_path / "forms.pypystm")
    server = start_stm_server("booking_app:make_app", str(tmp_path), "--threads", "2",
                              "--log", log_path, probe="/state", env=FORCED_ABORTS)
    try:
        pages, posts, refused = asyncio.run(_fetch_forms_and_post_them(server.port))
        state = server_state(server.port)
    finally:
        assert server.stop() == 0, server.output_tail()
    for page in pages:
        assert _xsrf_cookies(page) == [_form_token(page)], (page.headers, page.body)
        assert page.headers["X-Xsrf-Token"] == _form_token(page), (page.headers, page.body)
    assert len({_form_token(page) for page in pages}) == FORMS
    assert [post.code for post in posts] == [200] * FORMS, server.errors()
    assert [post.code for post in refused] == [403]
    assert (state["forms"], state["confirmed"]) == (FORMS, FORMS)
    assert_aborted_and_only_the_factory_inevitable(log_path)
