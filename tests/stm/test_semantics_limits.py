"""The places docs/semantics.md lists as weaker than a serial run behave as documented.

The numbers are those of "Where the contract is still weaker than a serial
run". Item 2 (generators) is shown in test_frames_and_policy.py, item 9
(tracebacks) in test_aborts.py and here (a function's code), item 11 (starvation) by the oversubscribed
runs of test_counters.py; items 4-7 (globals, closure cells, stable
classes, unbarriered statements) by the rewriter tests and
test_semantics.py.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
import tornado.web

from tests.stm import helpers, limits_plain
from tests.stm.conftest import instrumented
from tornado_stm import stm, transaction
from tornado_stm.stm import WORLD_LOCK, faults


@pytest.fixture
def app():
    module = instrumented("limits")
    yield module
    helpers.release()
    helpers.disarm()


def test_1_state_of_an_uninstrumented_module_is_not_tracked(app, monkeypatch) -> None:
    # No injected faults here: a spurious abort before the pause would read
    # 0 again and one after it 1, and the stale commit is what is shown.
    monkeypatch.setattr(faults, "ENABLED", False)
    limits_plain.STATE["x"] = 0
    stm.reset_stats()
    helpers.arm()
    thread = threading.Thread(target=app.copy_uninstrumented_state_across_a_pause)
    thread.start()
    assert helpers.wait_until_paused()
    limits_plain.STATE["x"] = 1            # plain code: no version bump
    helpers.release()
    thread.join(30)
    # Committed on the stale read, as documented: nothing told the section.
    assert app.OUT["copy"] == 0
    assert stm.stats()["aborts"] == 0


def test_3_a_dict_grown_while_a_section_iterates_it_raises_as_in_plain_python(app) -> None:
    app.D.clear()
    app.D["a"] = 1
    with pytest.raises(RuntimeError, match="changed size during iteration"):
        app.grow_while_iterating()


def test_8_changing_an_stmidset_makes_a_section_inevitable(app) -> None:
    members = transaction.stmidset()
    marker = object()
    stm.reset_stats()
    app.add_member(members, marker)
    assert marker in members
    assert any("stmidset.add" in cause for cause in stm.stats()["inevitable_by_cause"])


class _Connection:
    """Just enough of an HTTP/1 connection for a handler to answer on."""

    def set_close_callback(self, callback) -> None:
        pass

    def write_headers(self, start_line, headers, chunk=None):
        return self._done()

    def write(self, chunk):
        return self._done()

    def finish(self) -> None:
        pass

    @staticmethod
    def _done():
        future = asyncio.get_running_loop().create_future()
        future.set_result(None)
        return future


class _BetweenTheHooks:
    """A handler's ``_prepared_future``: Tornado resolves it between ``prepare()``
    and the method. Another thread's request counts then, once, and is waited for."""

    def __init__(self, another_request) -> None:
        self.another_request = another_request
        self.fired = False

    def cancelled(self) -> bool:
        return False

    def done(self) -> bool:
        return self.fired

    def set_result(self, value) -> None:
        if not self.fired:
            self.fired = True
            other = threading.Thread(target=self.another_request)
            other.start()
            # A section that is inevitable by now holds W, and the other
            # request commits after it: it is serial then too.
            other.join(5)


def _served(app, handler_class):
    """Serve one GET with ``handler_class``'s hooks, another request counting between them."""
    import tornado.httputil

    from tornado_stm.loop import request

    request.install()
    app.HOOKS["n"] = 0
    handler = handler_class(tornado.web.Application(), tornado.httputil.HTTPServerRequest(
        connection=_Connection(),
        start_line=tornado.httputil.RequestStartLine("GET", "/", "HTTP/1.1"),
        headers=tornado.httputil.HTTPHeaders({"Host": "127.0.0.1"})))
    handler._prepared_future = _BetweenTheHooks(app.another_request_counts)
    asyncio.run(handler._execute([]))
    assert handler._finished and app.HOOKS["n"] == 2
    return handler.mine, handler.seen


def test_15_hooks_around_a_coroutine_method_are_sections_of_their_own(app) -> None:
    """A synchronous prepare() and get() run as one section, as stock Tornado
    runs them in one step: the request counting in between either comes
    before both (an abort, a retry) or after both. With an ``async def``
    get(), prepare() is a section of its own: the other request commits
    between them, which stock Tornado's loop never lets happen."""
    mine, seen = _served(app, app.CountingHandler)
    assert mine == seen
    assert _served(app, app.AsyncCountingHandler) == (1, 2)


def test_10_atomic_outside_a_section_holds_the_world_lock() -> None:
    with transaction.atomic:
        assert WORLD_LOCK.held_by_current_thread()
    assert not WORLD_LOCK.held_by_current_thread()


def test_9_an_application_function_s_code_is_its_entry_wrapper_s(app) -> None:
    function = app.copy_uninstrumented_state_across_a_pause
    assert function.__code__.co_name == "section_entry"
    assert function.__name__ == "copy_uninstrumented_state_across_a_pause"
    assert function.__globals__ is not vars(app)        # read plainly, from outside



def test_17_a_python_hash_may_run_more_than_once_per_lookup_with_the_right_result(app) -> None:
    """Round 22's K3 (open/hash_count_forms.py): the barriers look the key up
    before Python's own lookup does, so a __hash__ written in Python runs
    more than once; the answer is the one plain Python gives."""
    app.TABLE.clear()
    app.TABLE[app.CountedKey(1)] = "one"
    app.HASH_CALLS["n"] = 0
    assert app.look_up_counted(1) == "one"
    assert app.HASH_CALLS["n"] >= 2
    app.HASH_CALLS["n"] = 0
    assert limits_plain.plain_lookup(app.TABLE, app.CountedKey(1)) == "one"
    assert app.HASH_CALLS["n"] == 1          # plain code: once
