"""Invariants of shared structures hold under concurrent sections.

A bank (transfers between accounts of a shared dict, with concurrent
audits that sum every balance) and a sorted linked list (concurrent
inserts and deletes, compared with a serial replay).
"""

from __future__ import annotations

import random
import time

import pytest

from tests.conftest import CPUS, FREE_THREADED
from tests.stm.conftest import instrumented, plain
from tests.stm.helpers import run_threads

ACCOUNTS, BALANCE = 20, 1000
TRANSFERS = 1500 if FREE_THREADED else 400


@pytest.mark.parametrize("threads", [2, 4])
def test_bank_audits_always_see_the_total(threads: int) -> None:
    bank = instrumented("bank")
    bank.open_accounts(ACCOUNTS, BALANCE)
    bank.AUDIT_FAILURES.clear()
    expected = ACCOUNTS * BALANCE
    audits = []

    def worker(index: int) -> None:
        for step in range(TRANSFERS):
            bank.random_transfer(index * 1_000_003 + step)
            if step % 10 == 0:
                audits.append(bank.audit(expected))

    run_threads(threads, worker)
    assert bank.AUDIT_FAILURES == []
    assert set(audits) == {expected}
    assert sum(bank.ACCOUNTS.values()) == expected


#: How long plain threads may take to break the bank (the first round usually does).
RACE_SECONDS = 20


@pytest.mark.freethreaded
@pytest.mark.skipif(CPUS < 2, reason="the race needs two threads running at once")
def test_bank_without_stm_breaks_the_invariant() -> None:
    """The same bank on plain threads (no STM): audits see a wrong total.

    What the test above is protected from: an audit runs between a
    transfer's two writes, or two transfers lose one's update. Rounds of
    four threads until one shows it, for at most ``RACE_SECONDS``.
    """
    bank = plain("bank")
    expected = ACCOUNTS * BALANCE
    deadline = time.monotonic() + RACE_SECONDS
    rounds = 0
    while True:
        rounds += 1
        bank.open_accounts(ACCOUNTS, BALANCE)
        bank.AUDIT_FAILURES.clear()
        audits: list[int] = []

        def worker(index: int) -> None:
            for step in range(TRANSFERS):
                bank.random_transfer(rounds * 100_000_007 + index * 1_000_003 + step)
                if step % 10 == 0:
                    audits.append(bank.audit(expected))

        run_threads(4, worker)
        # The audits' own record is consistent: one failure per wrong total they saw.
        assert len(audits) == 4 * len(range(0, TRANSFERS, 10))
        assert sorted(bank.AUDIT_FAILURES) == sorted(t for t in audits if t != expected)
        final = sum(bank.ACCOUNTS.values())
        if bank.AUDIT_FAILURES or final != expected or time.monotonic() > deadline:
            break
    assert bank.AUDIT_FAILURES or final != expected, (
        f"{rounds} rounds of plain threads never broke the bank in {RACE_SECONDS} s")


def _operations(seed: int, count: int) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    return [(rng.choice(("insert", "insert", "delete")), rng.randrange(100)) for _ in range(count)]


def _check_structure(shared) -> list[int]:
    keys = shared.keys()
    assert keys == sorted(set(keys)), "the list must stay sorted without duplicates"
    assert shared.length == len(keys), "the length must match the nodes"
    return keys


@pytest.mark.parametrize("threads", [2, 4])
def test_linked_list_matches_a_serial_replay(threads: int) -> None:
    """Each thread owns a residue class of keys, so any serial order gives one result."""
    linked = instrumented("linked")
    linked.reset()
    per_thread = {index: [(op, key * threads + index) for op, key in _operations(index, 200)]
                  for index in range(threads)}

    def worker(index: int) -> None:
        for op, key in per_thread[index]:
            getattr(linked, op)(key)

    run_threads(threads, worker)
    keys = _check_structure(linked.SHARED)

    replay = plain("linked")
    replay.reset()
    for index in range(threads):
        for op, key in per_thread[index]:
            getattr(replay, op)(key)
    assert keys == replay.SHARED.keys()


def test_linked_list_contended_keys_stay_consistent() -> None:
    """All threads hit the same keys: the structure stays valid, length exact."""
    linked = instrumented("linked")
    linked.reset()
    results: dict[int, list[bool]] = {}

    def worker(index: int) -> None:
        results[index] = [getattr(linked, op)(key) for op, key in _operations(100 + index, 300)]

    run_threads(4, worker)
    keys = _check_structure(linked.SHARED)
    inserted = sum(ok for index in results for (op, _), ok in
                   zip(_operations(100 + index, 300), results[index]) if op == "insert")
    deleted = sum(ok for index in results for (op, _), ok in
                  zip(_operations(100 + index, 300), results[index]) if op == "delete")
    assert len(keys) == inserted - deleted
