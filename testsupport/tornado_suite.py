"""Run Tornado's own test suite on the transactional loop (or on stock asyncio).

    python -m testsupport.tornado_suite [--stock | --per-thread | --hand-off]
        [--threads N] [--no-pipelining] [TEST ...]

(from the checkout, as ``make test-tornado`` does: ``testsupport`` is not installed).

TEST names are those ``python -m tornado.test.runtests`` takes
(``tornado.test.web_test``, ``tornado.test.web_test.ErrorResponseTest``...);
none means the whole suite. ``--stock`` runs the same tests on asyncio's own
loop, the reference to compare with; ``--per-thread`` on the loop each
thread of ``serve --loop per-thread`` runs. The tests come from the installed
``tornado`` package, unchanged: every ``IOLoop`` and ``asyncio.run`` they
create gets a transactional loop through :func:`tornado_stm.loop.install`.

Tornado's code never gives the world lock up by itself, so on the plain
transactional loop every handle runs on the thread that called
``run_forever``. ``--hand-off`` makes the suite exercise what application
sections do: every task step -- where Tornado calls a handler's code --
gives W up as it starts and takes it back
(``WORLD_LOCK.suspend()``/``resume()``), so other threads run the loop's
handles in between, the current task is swapped out and back, and every
kind of handle lands on whichever thread holds W. (Plain callbacks and I/O
callbacks are Tornado's own code, which never gives W up.)
"""

from __future__ import annotations

import argparse
import asyncio
import collections.abc
import sys
from typing import Any, Optional

from tornado_stm.stm.worldlock import WORLD_LOCK


def _give_world_lock_up_and_back() -> None:
    WORLD_LOCK.resume(WORLD_LOCK.suspend())


class _HandingOffCoroutine(collections.abc.Coroutine):
    """A coroutine whose every step first gives W up, as an atomic section would."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def send(self, value: Any) -> Any:
        _give_world_lock_up_and_back()
        return self._inner.send(value)

    def throw(self, *exc_info: Any) -> Any:
        _give_world_lock_up_and_back()
        return self._inner.throw(*exc_info)

    def close(self) -> None:
        self._inner.close()

    def __await__(self) -> Any:
        return self

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def __getattr__(self, name: str) -> Any:  # cr_frame, cr_code... for repr and debugging
        return getattr(self._inner, name)


def _handing_off_task_factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task:
    return asyncio.Task(_HandingOffCoroutine(coro), loop=loop, **kwargs)


def _install_hand_off(threads: Optional[int], pipelining: bool) -> None:
    from tornado_stm.loop import TransactionalEventLoop, TransactionalEventLoopPolicy

    class HandingOffEventLoop(TransactionalEventLoop):
        def __init__(self) -> None:
            super().__init__(threads=threads, pipelining=pipelining)
            self.set_task_factory(_handing_off_task_factory)

    class HandingOffPolicy(TransactionalEventLoopPolicy):
        def new_event_loop(self) -> TransactionalEventLoop:
            return HandingOffEventLoop()

    asyncio.set_event_loop_policy(HandingOffPolicy())


def _install_thread_loop() -> None:
    from tornado_stm.loop.perthread import ThreadLoop

    class ThreadLoopPolicy(asyncio.DefaultEventLoopPolicy):
        def new_event_loop(self) -> asyncio.AbstractEventLoop:
            return ThreadLoop()

    asyncio.set_event_loop_policy(ThreadLoopPolicy())


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m testsupport.tornado_suite",
        description="Run Tornado's test suite with the transactional event loop installed.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stock", action="store_true",
                      help="use asyncio's own event loop instead (the reference)")
    mode.add_argument("--per-thread", action="store_true",
                      help="use the loop each thread of `serve --loop per-thread` runs "
                      "(tornado_stm.loop.perthread.ThreadLoop)")
    mode.add_argument("--hand-off", action="store_true",
                      help="give the world lock up at every task step, so that "
                      "handles run on several threads")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads per transactional loop (default: one per core)")
    parser.add_argument("--no-pipelining", dest="pipelining", action="store_false")
    parser.add_argument("tests", nargs="*", metavar="TEST",
                        help="test modules, classes or methods (default: all)")
    args, runner_options = parser.parse_known_args(argv)
    if args.hand_off:
        _install_hand_off(args.threads, args.pipelining)
    elif args.per_thread:
        _install_thread_loop()
    elif not args.stock:
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
