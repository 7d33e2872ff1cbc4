"""A handler's checkpoint must not fail when another thread's handler of its class gets new attributes.

CPython stores the instance dicts of one class with shared keys. On
free-threaded CPython before 3.13.6 (gh-132617), ``dict(vars(obj))``
compared the *shared* keys' entry count before and after copying, so
another thread adding a new attribute name to *another* instance of the
class made it raise ``RuntimeError: dict mutated during update``. A
server's first requests of a handler class, on two loops at once, are
exactly that: the checkpoint of one request's handler (``_Recording``)
raised, the request answered 500 without running its handler, and the
booking of test_shared_state's failing-handler test was lost (CI, once).
"""

from __future__ import annotations

import sys
import threading

import pytest
import tornado.httputil
import tornado.web

from tornado_stm.loop import response
from tornado_stm.stm.stats import for_current_thread
from tornado_stm.stm.txn import Transaction

pytestmark = pytest.mark.skipif(getattr(sys, "_is_gil_enabled", lambda: True)(),
                                reason="a race of free-threaded CPython")

ROUNDS = 150
CHECKPOINTS = 60


class _Connection:
    def set_close_callback(self, callback: object) -> None:
        pass


def _handler(klass: type, application: tornado.web.Application) -> tornado.web.RequestHandler:
    request = tornado.httputil.HTTPServerRequest(
        start_line=tornado.httputil.RequestStartLine("POST", "/book", "HTTP/1.1"),
        headers=tornado.httputil.HTTPHeaders({"Host": "127.0.0.1"}), connection=_Connection())
    return klass(application, request)


def test_checkpoints_survive_another_thread_growing_the_class_keys() -> None:
    application = tornado.web.Application()
    failures: list[BaseException] = []
    for round_ in range(ROUNDS):
        # A fresh class each round: its shared keys grow only while its
        # first instances get their attributes.
        klass = type(f"Handler{round_}", (tornado.web.RequestHandler,), {})
        handler = _handler(klass, application)
        start = threading.Barrier(2)

        def other_loop() -> None:
            start.wait()
            other = _handler(klass, application)
            for n in range(40):          # attribute names no handler had yet
                setattr(other, f"_field{n}", n)

        def this_loop() -> None:
            start.wait()
            for _ in range(CHECKPOINTS):
                tx = Transaction(for_current_thread(), False, None)
                try:
                    recording = response._Recording(tx, handler)
                    recording.restore()
                except RuntimeError as exc:    # "dict mutated during update"
                    failures.append(exc)
                    return

        threads = [threading.Thread(target=other_loop), threading.Thread(target=this_loop)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not failures, f"{len(failures)} of {ROUNDS} rounds: {failures[0]!r}"
