"""Stock counts: odd calls restock through operator.call(restock, STOCK,
sku) (restock is a library helper), even calls do STOCK[sku] += 1.

Serial invariant: every call adds exactly 1, so sum(STOCK.values()) == K.

Attacks: operator.call is "pure" (operator.* in the policy table), and only
C builtins with effects are wrapped through the call barrier: the library
Python function it is given runs in place inside an optimistic section,
writing the shared dict with no log, no version and no undo.
"""
import os
import sys
import operator
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
from rtlib import restock
import transaction

STOCK = {"a": 0, "b": 0}
K = 1000


def step(i):
    sku = "ab"[(i // 2) % 2]
    if i % 2:
        operator.call(restock, STOCK, sku)
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
