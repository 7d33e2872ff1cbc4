"""Aborts are invisible: inconsistent views never reach the user, retries leave no trace.

``helpers.pause()`` (an uninstrumented function registered as pure)
lets a test stop a section in the middle while another thread commits a
conflicting change, which makes each scenario deterministic.
"""

from __future__ import annotations

import threading
import time

import pytest

from tests.stm import helpers
from tests.stm.conftest import instrumented
from tornado_stm import stm
from tornado_stm.stm import faults
from tornado_stm.stm.txn import CLOCK_ORDER_WAIT, CLOCK_READ_OUT_OF_ORDER


def _in_thread(fn, *args):
    """Run ``fn(*args)`` on a new thread; returns (thread, result holder)."""
    holder: dict = {}

    def body() -> None:
        try:
            holder["result"] = fn(*args)
        except BaseException as exc:
            holder["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    return thread, holder


@pytest.fixture(autouse=True)
def _gate():
    helpers.arm()
    yield
    helpers.release()
    helpers.disarm()


def _stop_commit_resume(section, args, conflicting, conflicting_args=()):
    """Run ``section`` until it pauses, commit ``conflicting`` meanwhile, then let it finish."""
    stm.reset_stats()
    thread, holder = _in_thread(section, *args)
    assert helpers.wait_until_paused()
    conflicting(*conflicting_args)
    helpers.release()
    thread.join(30)
    return holder


def test_a_read_after_a_conflicting_commit_aborts_instead_of_dividing_by_zero() -> None:
    zombie = instrumented("zombie")
    zombie.writer(0)
    holder = _stop_commit_resume(zombie.divide_by_consistency, (), zombie.writer, (7,))
    assert holder == {"result": 1.0}
    assert stm.stats()["aborts"] >= 1


def test_a_dict_view_taken_before_a_conflicting_commit_never_disagrees_with_later_reads() -> None:
    # NAMES.keys() is a view of the section's consistent copy (a read
    # shadow), so the count read after the commit is a conflict: abort and
    # retry, never the ValueError of a live view that moved on.
    zombie = instrumented("zombie")
    holder = _stop_commit_resume(zombie.torn_count, (), zombie.add_name, ("ada",))
    assert "error" not in holder, holder.get("error")
    assert holder["result"] == zombie.STATE["count"]
    causes = stm.stats()["aborts_by_cause"]
    if faults.ENABLED:
        # An injected abort may strike first, and the retry then reads the
        # new state without a conflict: one abort or more, of either cause.
        assert sum(causes.values()) >= 1, causes
    else:
        assert causes.get("write-read conflict") == 1, causes


def test_an_endless_loop_on_a_torn_view_is_aborted_by_periodic_validation() -> None:
    zombie = instrumented("zombie")
    holder = _stop_commit_resume(zombie.spin_until_consistent, (), zombie.add_name, ("bob",))
    assert holder["result"] == zombie.STATE["count"]
    causes = stm.stats()["aborts_by_cause"]
    if faults.ENABLED:
        # An injected abort may strike the torn attempt first: it is retried all the same.
        assert sum(causes.values()) >= 1, causes
    else:
        assert causes.get("write-read conflict", 0) >= 1, causes


def test_a_retried_section_leaves_no_partial_effect() -> None:
    effects = instrumented("effects")
    effects.SHARED.update(value=0, other=0)
    seen_during_pause: list = []

    def conflicting() -> None:
        seen_during_pause.append(dict(effects.SHARED))   # the first attempt's write is private
        effects.bump_other()

    holder = _stop_commit_resume(effects.write_then_pause, (5,), conflicting)
    assert "error" not in holder
    assert seen_during_pause == [{"value": 0, "other": 0}]
    assert effects.SHARED == {"value": 5, "other": 6}     # one effect of each section
    assert stm.stats()["aborts"] >= 1


def test_an_application_exception_keeps_the_writes_before_it_and_propagates_unchanged() -> None:
    # As in plain Python and PyPy-STM: what ran before the raise happened.
    effects = instrumented("effects")
    effects.SHARED.update(value=0, other=0)
    with pytest.raises(effects.AppError, match="failed after writing 9") as info:
        effects.write_then_fail(9)
    assert effects.SHARED == {"value": 9, "other": 0}
    last = info.traceback[-1]
    assert last.path.name == "effects.py"
    assert last.statement.lines[0].strip().startswith("raise AppError")
    assert stm.current() is None


def test_application_exceptions_are_not_retried() -> None:
    effects = instrumented("effects")
    stm.reset_stats()
    with pytest.raises(effects.AppError):
        effects.write_then_fail(1)
    causes = stm.stats()["aborts_by_cause"]
    if faults.ENABLED:      # the fault run may abort it spuriously, never because of the error
        assert all(cause.startswith("injected fault") for cause in causes), causes
    else:
        assert stm.stats()["aborts"] == 0


def _clock_readers():
    clocks = instrumented("clocks")
    clocks.READINGS.clear()
    stm.reset_stats()
    first, first_holder = _in_thread(clocks.read_then_pause)
    assert helpers.wait_until_paused()
    second, second_holder = _in_thread(clocks.read_and_record)
    return clocks, (first, first_holder), (second, second_holder)


def test_a_later_clock_reader_commits_after_an_earlier_one_instead_of_aborting_it() -> None:
    """The second section reads the clock while the first, which read it
    before, is stopped: the two conflict (the first read what the second
    writes), so the second's commit waits for the first's and neither
    aborts (without the wait the first's reading would go back: an abort;
    test_clock_placement has sections that need not wait)."""
    clocks, (first, first_holder), (second, second_holder) = _clock_readers()
    time.sleep(CLOCK_ORDER_WAIT / 5)          # the second reads, and waits
    helpers.release()
    first.join(30)
    second.join(30)
    assert first_holder == {"result": None} and second_holder == {"result": None}
    readings = [reading for _, reading in clocks.READINGS]
    assert readings == sorted(readings)       # serial: a clock never goes back
    if not faults.ENABLED:                    # (an injected abort reorders them)
        assert [who for who, _ in clocks.READINGS] == ["first", "second"]
        assert CLOCK_READ_OUT_OF_ORDER not in stm.stats()["aborts_by_cause"]


def test_the_wait_for_an_earlier_clock_reader_is_bounded() -> None:
    """A first reader that does not end (stopped here) holds the second up
    for CLOCK_ORDER_WAIT at most; the first then aborts and reads anew."""
    clocks, (first, first_holder), (second, second_holder) = _clock_readers()
    second.join(CLOCK_ORDER_WAIT + 10)
    assert not second.is_alive() and second_holder == {"result": None}
    assert first.is_alive()                   # still stopped: the second did not wait for it
    helpers.release()
    first.join(30)
    assert first_holder == {"result": None}
    assert [who for who, _ in clocks.READINGS] == ["second", "first"]
    readings = [reading for _, reading in clocks.READINGS]
    assert readings == sorted(readings)
    if not faults.ENABLED:      # (an injected abort may send the first back before the commit's check)
        assert stm.stats()["aborts_by_cause"].get(CLOCK_READ_OUT_OF_ORDER, 0) >= 1


def test_a_reader_overtaken_once_is_waited_for_to_its_end() -> None:
    """The first reader, overtaken by the second after the bounded wait,
    aborts and reads the clock anew; stopped again, it is not overtaken a
    second time: a third reader waits past CLOCK_ORDER_WAIT for it to end
    (a long search would otherwise lose every retry, round 23's E)."""
    clocks, (first, first_holder), (second, second_holder) = _clock_readers()
    second.join(CLOCK_ORDER_WAIT + 10)
    assert not second.is_alive() and second_holder == {"result": None}
    first_gate = helpers._gate
    helpers.arm()                              # the retry stops at a new gate
    first_gate.set()
    assert helpers.wait_until_paused()         # the first's retry, stopped
    # (under fault injection an injected abort may hit the first before the
    # second overtakes it: its retry is then no overtaken reader, and a third
    # reader rightly waits for it only CLOCK_ORDER_WAIT)
    overtaken = stm.stats()["aborts_by_cause"].get(CLOCK_READ_OUT_OF_ORDER, 0) >= 1
    assert overtaken or faults.ENABLED
    third, third_holder = _in_thread(clocks.read_and_record)
    third.join(CLOCK_ORDER_WAIT * 4)
    assert third.is_alive() or not overtaken   # waiting for the overtaken reader
    helpers.release()
    first.join(30)
    third.join(30)
    assert first_holder == {"result": None} and third_holder == {"result": None}
    readings = [reading for _, reading in clocks.READINGS]
    assert readings == sorted(readings)
    if not faults.ENABLED:
        assert [who for who, _ in clocks.READINGS] == ["second", "first", "second"]
        assert stm.stats()["aborts_by_cause"].get(CLOCK_READ_OUT_OF_ORDER, 0) == 1
