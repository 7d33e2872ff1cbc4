"""Transfers that print half-way through (becoming inevitable), and audits.

Serial invariants: the balances total 800 between calls; each transfer is
logged exactly once; at the end 400 distinct transfers are logged.

Attacks: inevitability in the middle of a section. ``print`` is an
irrevocable action: before it the section validates, takes the world lock
and publishes the writes it has made so far; after it, it writes in place
and holds every stripe it writes, so an optimistic audit must see all of a
transfer or none of it, never the debit alone.
"""

import sys
import time

import transaction

accounts = [100] * 8
log = []
bad = []


def transfer(i):
    a, b = i % 8, (i * 5 + 3) % 8
    amount = i % 13
    accounts[a] -= amount
    if i % 5 == 0:
        print("t", i, file=sys.stderr)       # irrevocable mid-way
    time.time()
    accounts[b] += amount
    log.append(i)


def audit(i):
    if sum(accounts) != 800:
        bad.append(("torn", sum(accounts)))
    if len(log) != len(set(log)):
        bad.append(("dup log",))


def main():
    for i in range(600):
        transaction.add(transfer if i % 3 else audit, i)
    transaction.run()
    if sum(accounts) != 800:
        bad.append(("final", sum(accounts)))
    if len(log) != 400 or len(set(log)) != 400:
        bad.append(("log", len(log), len(set(log))))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
