"""A bank: transfers between accounts in a shared dict, and audits."""

import random

ACCOUNTS: dict[str, int] = {}
AUDIT_FAILURES: list = []


def open_accounts(count: int, balance: int) -> None:
    ACCOUNTS.clear()
    for index in range(count):
        ACCOUNTS[f"acct{index}"] = balance


def transfer(source: str, target: str, amount: int) -> None:
    if source == target:
        return
    ACCOUNTS[source] -= amount
    ACCOUNTS[target] += amount


def random_transfer(seed: int) -> None:
    rng = random.Random(seed)
    names = sorted(ACCOUNTS)
    transfer(rng.choice(names), rng.choice(names), rng.randint(1, 50))


def audit(expected: int) -> int:
    total = 0
    for name in ACCOUNTS:
        total += ACCOUNTS[name]
    if total != expected:
        AUDIT_FAILURES.append(total)
    return total
