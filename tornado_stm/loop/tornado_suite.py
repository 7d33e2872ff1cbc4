"""Run Tornado's own test suite on the transactional loop (or on stock asyncio).

    python -m tornado_stm.loop.tornado_suite [--stock] [--threads N]
        [--no-pipelining] [TEST ...]

TEST names are those ``python -m tornado.test.runtests`` takes
(``tornado.test.web_test``, ``tornado.test.web_test.ErrorResponseTest``...);
none means the whole suite. ``--stock`` runs the same tests on asyncio's own
loop, the reference to compare with. The tests come from the installed
``tornado`` package, unchanged: every ``IOLoop`` and ``asyncio.run`` they
create gets a transactional loop through :func:`tornado_stm.loop.install`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tornado_stm.loop.tornado_suite",
        description="Run Tornado's test suite with the transactional event loop installed.")
    parser.add_argument("--stock", action="store_true",
                        help="use asyncio's own event loop instead (the reference)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads per transactional loop (default: one per core)")
    parser.add_argument("--no-pipelining", dest="pipelining", action="store_false")
    parser.add_argument("tests", nargs="*", metavar="TEST",
                        help="test modules, classes or methods (default: all)")
    args, runner_options = parser.parse_known_args(argv)
    if not args.stock:
        from tornado_stm.loop import install
        install(threads=args.threads, pipelining=args.pipelining)
    from tornado.test import runtests
    # runtests parses sys.argv itself (through tornado.options).
    # With no names, tornado.testing.main looks for all() in __main__,
    # which is runtests only when run as a script: name it.
    tests = args.tests or ["tornado.test.runtests.all"]
    sys.argv = ["tornado.test.runtests", *runner_options, *tests]
    try:
        runtests.main()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
