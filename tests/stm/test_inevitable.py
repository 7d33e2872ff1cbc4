"""Inevitable sections: irrevocable side effects happen exactly once."""

from __future__ import annotations

import pytest

from tests.conftest import FREE_THREADED
from tests.stm.conftest import instrumented
from tests.stm.helpers import run_threads
from tornado_stm import stm
from tornado_stm.stm.worldlock import WORLD_LOCK

CALLS = 300 if FREE_THREADED else 100


@pytest.mark.parametrize("threads", [2, 4])
def test_file_append_happens_exactly_once_under_heavy_conflicts(tmp_path, threads: int) -> None:
    effects = instrumented("effects")
    effects.LOG_PATH = str(tmp_path / "effects.log")
    effects.SHARED.update(value=0, other=0)
    stm.reset_stats()

    def worker(index: int) -> None:
        for step in range(CALLS):
            effects.append_line_then_bump(f"{index}:{step}")

    run_threads(threads, worker)
    lines = (tmp_path / "effects.log").read_text().splitlines()
    assert sorted(lines) == sorted(f"{i}:{s}" for i in range(threads) for s in range(CALLS))
    assert effects.SHARED == {"value": threads * CALLS, "other": threads * CALLS}
    causes = stm.stats()["inevitable_by_cause"]
    assert any("open" in cause for cause in causes), causes


def test_a_section_started_under_w_gives_it_up_and_ends_holding_it() -> None:
    effects = instrumented("effects")
    observed = []

    def probe() -> None:
        observed.append(WORLD_LOCK.held_by_current_thread())

    counters = instrumented("counters")
    WORLD_LOCK.acquire()
    try:
        stm.run_section(probe)
        counters.bump_dict_item()              # a section with writes: commits under W
        assert WORLD_LOCK.held_by_current_thread()
    finally:
        WORLD_LOCK.release()
    assert observed and not any(observed)      # (more than once if a fault was injected)
    assert not WORLD_LOCK.locked()
    del effects


def test_a_section_started_without_w_ends_without_it(tmp_path) -> None:
    effects = instrumented("effects")
    effects.LOG_PATH = str(tmp_path / "x.log")
    effects.append_line_then_bump("one")       # inevitable: takes W, then gives it back
    assert not WORLD_LOCK.locked()


def test_inevitable_section_started_under_w_keeps_w(tmp_path) -> None:
    effects = instrumented("effects")
    effects.LOG_PATH = str(tmp_path / "y.log")
    WORLD_LOCK.acquire()
    try:
        effects.append_line_then_bump("two")
        assert WORLD_LOCK.held_by_current_thread()
    finally:
        WORLD_LOCK.release()
