"""The places docs/semantics.md lists as weaker than a serial run behave as documented.

The numbers are those of "Where the contract is still weaker than a serial
run". Item 2 (generators) is shown in test_frames_and_policy.py, item 9
(tracebacks) in test_aborts.py, item 11 (starvation) by the oversubscribed
runs of test_counters.py; items 4-7 (globals, closure cells, stable
classes, unbarriered statements) by the rewriter tests and
test_semantics.py.
"""

from __future__ import annotations

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


def test_15_a_request_s_hooks_are_sections_of_their_own(app) -> None:
    """prepare() and get() of one request are two sections: another request's
    section can commit between them, which stock Tornado's loop never lets
    happen for synchronous hooks."""
    import tornado.httputil

    class Connection:
        def set_close_callback(self, callback) -> None:
            pass

    request = tornado.httputil.HTTPServerRequest(
        connection=Connection(),
        start_line=tornado.httputil.RequestStartLine("GET", "/", "HTTP/1.1"),
        headers=tornado.httputil.HTTPHeaders({"Host": "127.0.0.1"}))
    handler = app.CountingHandler(tornado.web.Application(), request)
    app.HOOKS["n"] = 0
    handler.prepare()                   # a section, committed
    app.another_request_counts()        # another one, in between
    handler.get()
    assert (handler.mine, handler.seen) == (1, 2)


def test_10_atomic_outside_a_section_holds_the_world_lock() -> None:
    with transaction.atomic:
        assert WORLD_LOCK.held_by_current_thread()
    assert not WORLD_LOCK.held_by_current_thread()
