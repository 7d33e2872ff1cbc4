"""Invariants of shared structures hold under concurrent sections.

A bank (transfers between accounts of a shared dict, with concurrent
audits that sum every balance) and a sorted linked list (concurrent
inserts and deletes, compared with a serial replay).
"""

from __future__ import annotations

import random

import pytest

from tests.conftest import FREE_THREADED
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


@pytest.mark.freethreaded
def test_bank_without_stm_demonstration(capsys: pytest.CaptureFixture) -> None:
    """Demonstration (passes either way): plain threads break the bank's invariant."""
    bank = plain("bank")
    bank.open_accounts(ACCOUNTS, BALANCE)
    bank.AUDIT_FAILURES.clear()
    expected = ACCOUNTS * BALANCE

    def worker(index: int) -> None:
        for step in range(4 * TRANSFERS):
            bank.random_transfer(index * 1_000_003 + step)
            if step % 10 == 0:
                bank.audit(expected)

    run_threads(4, worker)
    with capsys.disabled():
        print(f"\nwithout the STM: {len(bank.AUDIT_FAILURES)} audits saw a wrong total, "
              f"final total {sum(bank.ACCOUNTS.values())} (expected {expected})")


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
