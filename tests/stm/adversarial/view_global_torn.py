"""A ``dict.values()`` view bound once at import, summed by audits during transfers.

Serial invariant: transfers keep ``sum(balances.values()) == 1000``, so
every audit's ``sum(VALUES)`` is 1000.

Attacks: dict views made outside the section, concurrently: the view reads
the live dict with no barrier, so unless the engine reads it through the
section's snapshot, an audit can see a transfer's commit half published (a
torn total) and still commit.
"""

import transaction

balances = {f"a{k}": 100 for k in range(10)}
VALUES = balances.values()      # a live view, bound once at import
bad = []


def spin():
    x = 0
    for j in range(100):
        x += j
    return x


def transfer(i):
    src, dst = f"a{i % 10}", f"a{(i * 3 + 1) % 10}"
    amount = i % 17 + 1
    balances[src] -= amount
    spin()
    balances[dst] += amount


def audit(i):
    total = sum(VALUES)
    if total != 1000:
        bad.append(("audit torn", total))


def main():
    for i in range(600):
        transaction.add(transfer if i % 2 == 0 else audit, i)
    transaction.run()
    if sum(balances.values()) != 1000:
        bad.append(("final", sum(balances.values())))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
