"""The async handler mix over real HTTP, on stock Tornado and on tornado-stm."""

from __future__ import annotations

import concurrent.futures
from typing import Iterator

import pytest

from apps.primes import primes_up_to
from tests.apps.conftest import SERVER_KINDS, serve
from tests.apps.http_helpers import fetch
from testsupport.serverproc import ServerProcess


@pytest.fixture(scope="module", params=SERVER_KINDS)
def asyncmix_server(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[ServerProcess]:
    server = serve(request.param, "apps.asyncmix:make_app", tmp_path_factory.mktemp("server"))
    yield server
    server.stop()


def test_work_waits_then_computes(asyncmix_server) -> None:
    status, _, answer = fetch(asyncmix_server.url + "/work")
    assert status == 200
    assert answer == {"waited_ms": 5, "n": 1000, "primes": len(primes_up_to(1000))} == \
        {"waited_ms": 5, "n": 1000, "primes": 168}
    assert fetch(asyncmix_server.url + "/work?ms=0&n=30")[2]["primes"] == 10


def test_concurrent_requests_all_get_their_own_answer(asyncmix_server) -> None:
    urls = [f"{asyncmix_server.url}/work?ms={i % 7}&n={100 + i}" for i in range(40)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(fetch, urls))
    for i, (status, _, answer) in enumerate(answers):
        assert status == 200 and answer["n"] == 100 + i
        assert answer["primes"] == len(primes_up_to(100 + i))


@pytest.mark.parametrize("query, reason", [("ms=-1", "ms must be a non-negative integer"),
                                           ("ms=1001", "ms must be at most 1000"),
                                           ("n=x", "n must be a non-negative integer"),
                                           ("n=20001", "n must be at most 20000")])
def test_bad_arguments_get_400(asyncmix_server, query, reason) -> None:
    assert fetch(f"{asyncmix_server.url}/work?{query}")[:2] == (400, reason)
