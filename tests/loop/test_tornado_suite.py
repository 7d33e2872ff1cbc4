"""Tornado's own tests, from the installed package, on the transactional loop.

A quick subset runs here on every ``make test``, as subprocesses of this
interpreter, once on stock asyncio (the reference) and once on the
transactional loop; no test may fail on ours that passes on stock.
``make test-tornado`` runs the whole suite the same way.

``--hand-off`` runs make every task step give the world lock up and take
it back as it starts, as an application section would, so that Tornado's
callbacks run on several threads and the current task is swapped out and
back all the time.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from testsupport.serverproc import REPO_ROOT

QUICK_MODULES = [
    "tornado.test.asyncio_test", "tornado.test.concurrent_test", "tornado.test.gen_test",
    "tornado.test.httpserver_test", "tornado.test.ioloop_test", "tornado.test.locks_test",
    "tornado.test.queues_test", "tornado.test.web_test", "tornado.test.websocket_test",
]
#: Modules whose tests do not depend on callbacks of one batch *finishing*
#: in order (see docs/compatibility.md for the ones that do).
HAND_OFF_MODULES = [
    "tornado.test.concurrent_test", "tornado.test.queues_test", "tornado.test.web_test",
    "tornado.test.websocket_test",
]

RAN = re.compile(r"^Ran (\d+) tests?", re.MULTILINE)
FAILED_TEST = re.compile(r"^(?:FAIL|ERROR): (\S+) \(([\w.]+)\)", re.MULTILINE)


def run_suite(*options: str, modules: list[str]) -> tuple[int, set[str]]:
    """Run the suite runner; return (tests run, names of failed tests)."""
    completed = subprocess.run(
        [sys.executable, "-m", "testsupport.tornado_suite", *options, *modules],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)  # testsupport is not installed
    output = completed.stdout + completed.stderr
    ran = RAN.search(output)
    assert ran, f"the suite did not run:\n{output[-3000:]}"
    failed = {f"{cls}.{name}" for name, cls in FAILED_TEST.findall(output)}
    if completed.returncode != 0 and not failed:
        # runtests also fails a run that logged or wrote to stderr.
        failed.add("(run logged errors: " + output.strip().splitlines()[-1] + ")")
    return int(ran.group(1)), failed


@pytest.fixture(scope="module")
def stock_results() -> tuple[int, set[str]]:
    return run_suite("--stock", modules=QUICK_MODULES)


def test_quick_subset_passes_as_on_stock_asyncio(stock_results) -> None:
    stock_ran, stock_failed = stock_results
    ran, failed = run_suite(modules=QUICK_MODULES)
    assert ran == stock_ran
    assert failed - stock_failed == set()


def test_quick_subset_passes_on_the_loop_of_each_thread(stock_results) -> None:
    stock_ran, stock_failed = stock_results
    ran, failed = run_suite("--per-thread", modules=QUICK_MODULES)
    assert ran == stock_ran
    assert failed - stock_failed == set()


def test_subset_passes_with_the_world_lock_handed_off_at_every_step(stock_results) -> None:
    _, stock_failed = stock_results
    ran, failed = run_suite("--hand-off", "--threads", "2", modules=HAND_OFF_MODULES)
    assert ran > 350
    assert failed - stock_failed == set()
