"""The primes app end to end: hello, primes, fib and their 400s over real HTTP."""

from __future__ import annotations

import pytest

from apps.primes import primes_up_to
from tests.apps.http_helpers import fetch


def test_primes_up_to_matches_a_sieve() -> None:
    limit = 2000
    sieve = [True] * (limit + 1)
    sieve[0] = sieve[1] = False
    for i in range(2, int(limit ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = [False] * len(sieve[i * i::i])
    assert primes_up_to(limit) == [i for i, is_prime in enumerate(sieve) if is_prime]


def test_hello(demo_server) -> None:
    assert fetch(demo_server.url + "/")[::2] == (200, "Hello, world\n")


def test_primes(demo_server) -> None:
    assert fetch(demo_server.url + "/primes/30")[::2] == \
        (200, {"primes": [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]})
    status, _, body = fetch(demo_server.url + "/primes/10000")
    assert status == 200 and len(body["primes"]) == 1229 and body["primes"][-1] == 9973


def test_fib(demo_server) -> None:
    assert fetch(demo_server.url + "/fib/20")[::2] == (200, {"n": 20, "fib": 6765})
    assert fetch(demo_server.url + "/fib/0")[::2] == (200, {"n": 0, "fib": 0})


@pytest.mark.parametrize("path, reason", [
    ("/primes/abc", "n must be a non-negative integer"),
    ("/primes/-5", "n must be a non-negative integer"),
    ("/primes/", "n must be a non-negative integer"),
    ("/primes/%C3%A9", "n must be a non-negative integer"),
    ("/primes/99999999", "n must be at most 50000"),
    ("/fib/33", "n must be at most 32"),
    ("/fib/1.5", "n must be a non-negative integer"),
])
def test_bad_numbers_get_400_with_reason(demo_server, path: str, reason: str) -> None:
    status, status_reason, body = fetch(demo_server.url + path)
    assert (status, status_reason, body) == (400, reason, f"400 {reason}\n")


def test_unknown_route_is_404(demo_server) -> None:
    assert fetch(demo_server.url + "/no/such/page")[0] == 404
