"""The primes app: CPU-bound handlers with no shared state.

``GET /`` says hello, ``GET /primes/<n>`` returns ``{"primes": [...]}``, the
primes up to n by trial division (the 2014 PyPy-STM benchmark), and
``GET /fib/<n>`` returns ``{"n": n, "fib": fib(n)}`` computed by the naive
recursion of the usual "Python vs Go" comparisons. Run alone with
``python -m apps.primes --port 8888``.
"""

from __future__ import annotations

import tornado.web

#: Largest n accepted, so one request cannot take the server for minutes.
MAX_PRIMES_N = 50_000
MAX_FIB_N = 32


def primes_up_to(n: int) -> list[int]:
    """The primes <= n, by trial division by every smaller number.

    Deliberately naive, as in the 2014 benchmark: the point is a fixed,
    CPU-bound amount of pure-Python work per request (about 5.7 million
    divisions for n = 10000).
    """
    primes: list[int] = []
    for candidate in range(2, n + 1):
        for divisor in range(2, candidate):
            if candidate % divisor == 0:
                break
        else:
            primes.append(candidate)
    return primes


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def parse_bound(text: str, limit: int) -> int:
    """The path argument as an int in 0..limit, or a 400 with the reason."""
    if not text.isdigit():
        raise tornado.web.HTTPError(400, reason="n must be a non-negative integer")
    n = int(text)
    if n > limit:
        raise tornado.web.HTTPError(400, reason=f"n must be at most {limit}")
    return n


class PlainErrorHandler(tornado.web.RequestHandler):
    """Errors as one line of text: the reason, not Tornado's HTML page."""

    def write_error(self, status_code: int, **kwargs: object) -> None:
        self.set_header("Content-Type", "text/plain; charset=UTF-8")
        self.finish(f"{status_code} {self._reason}\n")


class HelloHandler(PlainErrorHandler):
    def get(self) -> None:
        self.write("Hello, world\n")


class PrimesHandler(PlainErrorHandler):
    def get(self, n: str) -> None:
        self.write({"primes": primes_up_to(parse_bound(n, MAX_PRIMES_N))})


class FibHandler(PlainErrorHandler):
    def get(self, n: str) -> None:
        bound = parse_bound(n, MAX_FIB_N)
        self.write({"n": bound, "fib": fib(bound)})


def routes() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [
        (r"/", HelloHandler),
        (r"/primes/([^/]*)", PrimesHandler),
        (r"/fib/([^/]*)", FibHandler),
    ]


def make_app() -> tornado.web.Application:
    return tornado.web.Application(routes())


if __name__ == "__main__":
    from apps.standalone import main

    main(make_app, "The primes app (hello, primes, fib) on stock Tornado.")
