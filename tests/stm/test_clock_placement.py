"""A section overtaken by a later clock reader commits before it, in the serial order, when they are independent.

In a serial run the readings of a clock never go back. Two sections may
read it in one order and commit in the other; the first need not abort
then, if running it just before the second (and what committed after
the second) gives every section the values it saw
(``txn.place_before_later_readers``). Each scenario stops the first reader
after its reading (``helpers.pause``), lets a second reader commit, and
checks that the outcome is one a serial run gives: the first is placed
before the second only when the second neither read nor wrote what the
first writes, ran optimistically, and the first saw nothing of it.
"""

from __future__ import annotations

import threading

import pytest

from tests.stm import helpers
from tests.stm.conftest import instrumented
from tornado_stm import stm
from tornado_stm.stm import faults
from tornado_stm.stm.txn import CLOCK_READ_OUT_OF_ORDER, COMMITTED_ORDER
from tornado_stm.stm.versions import stripe_of_key, stripe_of_object


@pytest.fixture
def board():
    clockplace = instrumented("clockplace")
    clockplace.reset()
    helpers.arm()
    stm.reset_stats()
    yield clockplace
    helpers.release()
    helpers.disarm()


def _overtaken(first, second) -> dict:
    """Run ``first`` until it pauses after its reading, ``second`` to its
    commit on this thread, then let ``first`` finish; its outcome."""
    holder: dict = {}

    def body() -> None:
        try:
            holder["result"] = first()
        except BaseException as exc:        # shown by the test's assertion
            holder["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    assert helpers.wait_until_paused()
    second()
    helpers.release()
    thread.join(30)
    assert not thread.is_alive()
    return holder


def _clock_aborts() -> int:
    return stm.stats()["aborts_by_cause"].get(CLOCK_READ_OUT_OF_ORDER, 0)


def _assert_sent_back() -> None:
    """The first reader was not placed: it aborted once, for clock order
    (an injected abort may come first and change that count)."""
    if not faults.ENABLED:
        assert _clock_aborts() == 1
        assert stm.stats()["placed_earlier"] == 0


def test_independent_sections_commit_both_the_first_before_the_second(board) -> None:
    holder = _overtaken(board.first_writes_its_own, board.second_writes_its_own)
    assert holder == {"result": None}
    assert board.BOARD.first is not None and board.BOARD.second is not None
    if not faults.ENABLED:
        # The first's reading is the older, and it was not read again: its
        # commit went before the second's in the serial order.
        assert board.BOARD.first < board.BOARD.second
        assert _clock_aborts() == 0
        assert stm.stats()["placed_earlier"] == 1


def test_a_later_reader_that_read_what_the_first_writes_sends_it_back(board) -> None:
    holder = _overtaken(board.first_writes_its_own, board.second_reads_the_firsts)
    assert holder == {"result": None}
    second_reading, first_seen = board.BOARD.second
    # The second saw no write of the first: it comes first in the serial
    # order, so the first's committed reading is its retry's, later.
    assert first_seen is None
    assert board.BOARD.first >= second_reading
    _assert_sent_back()


def test_a_later_reader_that_wrote_what_the_first_writes_sends_it_back(board) -> None:
    holder = _overtaken(board.first_writes_its_own, board.second_writes_the_firsts)
    assert holder == {"result": None}
    # The first's write is the last one (the second's would be lost under
    # it if the first went before), with a reading after the second's.
    assert isinstance(board.BOARD.first, float)
    _assert_sent_back()


def test_a_later_reader_that_ran_in_place_sends_it_back(board) -> None:
    """What an inevitable section read is not recorded: nothing goes before it."""
    holder = _overtaken(board.first_writes_its_own, board.second_runs_in_place)
    assert holder == {"result": None}
    assert board.BOARD.first >= board.BOARD.second
    _assert_sent_back()


def test_a_first_reader_that_saw_the_later_commit_cannot_go_before_it(board) -> None:
    holder = _overtaken(board.first_reads_the_seconds_after_the_pause, board.second_writes_its_own)
    assert holder == {"result": None}
    reading, second_seen = board.BOARD.first
    # It read the second's write: it runs after it, so with a later reading.
    assert second_seen == board.BOARD.second
    assert reading >= board.BOARD.second
    _assert_sent_back()


def test_the_order_is_not_kept_once_no_section_holds_a_clock_reading(board) -> None:
    _overtaken(board.first_writes_its_own, board.second_writes_its_own)
    board.second_writes_its_own()           # a reader alone: nothing to order against
    assert COMMITTED_ORDER == []


def test_an_attribute_sharing_a_stripe_with_a_dict_keeps_its_order(board) -> None:
    """Other keys of one plain dict commute, but a location sharing the
    dict's whole stripe (an attribute, here) does not: the two sections
    writing that attribute keep their order, though both also write the
    dict (once, the shared stripe counted as the dict's alone)."""
    whole = stripe_of_object(id(board.SHARED))
    name = next(f"a{n}" for n in range(1 << 24)
                if stripe_of_key(id(board.BOARD), f"a{n}") == whole)
    holder = _overtaken(lambda: board.first_writes_the_attribute_and_a_key(name),
                        lambda: board.second_writes_the_attribute_and_a_key(name))
    assert holder == {"result": None}
    # The attribute's last writer read the clock last, as in a serial run.
    assert getattr(board.BOARD, name) == board.SHARED["first"] >= board.SHARED["second"]
    _assert_sent_back()
