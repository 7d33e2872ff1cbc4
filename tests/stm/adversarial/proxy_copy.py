"""Transfers between two accounts of a dict published read-only through
``types.MappingProxyType``; audits copy the proxy with ``dict(...)``.

Serial invariant: ``ACC["a"] + ACC["b"] == 200`` between calls, so every
audit's copy totals 200.

Attacks: a ``MappingProxyType`` made at import over a shared dict is not a
container to the engine: ``dict(VIEW)`` (``pure fresh``) copies the live
dict in C with no read recorded, while a transfer that turned inevitable
half-way (``time.sleep``) writes the dict in place.
"""

import time
import types

import transaction

K = 400
ACC = {"a": 100, "b": 100}
VIEW = types.MappingProxyType(ACC)
bad = []


def transfer(i):
    amt = i % 5 + 1
    ACC["a"] -= amt
    time.sleep(0.0002)          # irrevocable: the section turns inevitable here
    ACC["b"] += amt


def back(i):
    amt = i % 5 + 1
    ACC["b"] -= amt
    time.sleep(0.0002)
    ACC["a"] += amt


def audit(i):
    snap = dict(VIEW)
    if snap["a"] + snap["b"] != 200:
        bad.append(("torn", snap))


def main():
    for i in range(K):
        transaction.add((transfer, audit, back, audit)[i % 4], i)
    transaction.run()
    if ACC["a"] + ACC["b"] != 200:
        bad.append(("final", ACC))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
