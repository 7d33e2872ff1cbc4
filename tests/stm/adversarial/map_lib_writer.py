"""Stock counts: odd calls restock a SKU with a library helper applied by
map() (list(map(restock, [STOCK], [sku]))), even calls do STOCK[sku] += 1.

Serial invariant: every call adds exactly 1, so sum(STOCK.values()) == K.

Attacks: a library (uninstrumented) Python function handed to map(): only
C builtins with effects are wrapped through the call barrier, so the helper
writes the shared dict in place from an optimistic section (no versions, not
undone on abort).
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
from rtlib import restock
import transaction

STOCK = {"a": 0, "b": 0}
K = 1000


def step(i):
    sku = "ab"[(i // 2) % 2]
    if i % 2:
        list(map(restock, [STOCK], [sku]))
    else:
        STOCK[sku] += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    total = sum(STOCK.values())
    if total != K:
        print("BAD", total, K, STOCK); sys.exit(1)
    print("OK", total)


main()
