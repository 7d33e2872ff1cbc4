"""A types.SimpleNamespace holding two balances; transfers move money
between them, readers snapshot the namespace through repr() / == / vars()
copies (what a logger or a cache key would do).
Serial invariant: every snapshot shows a + b == 1000.

Attacks: repr() and == of a shared types.SimpleNamespace: C reads of its
attribute dict that record no read, so a concurrent transfer can commit half-
way through the reader's snapshot.
"""
import sys
import re
from types import SimpleNamespace
import transaction

NS = SimpleNamespace(a=500, b=500)
bad = []

def transfer(i):
    amt = 1 + i % 7
    NS.a -= amt
    for _ in range(20):
        pass
    NS.b += amt

def reader(i):
    text = repr(NS)
    m = re.search(r"a=(-?\d+), b=(-?\d+)", text)
    a, b = int(m.group(1)), int(m.group(2))
    if a + b != 1000:
        bad.append(("torn repr", i, text))
    if NS == SimpleNamespace(a=a, b=1000 - a) and NS.a + NS.b != 1000:
        bad.append(("torn ==", i))

def step(i):
    (transfer if i % 2 else reader)(i)

def main():
    for i in range(2000):
        transaction.add(step, i)
    transaction.run()
    if NS.a + NS.b != 1000:
        bad.append(("final", NS))
    if bad:
        print("BAD", len(bad), sorted({b[0] for b in bad}), bad[:2]); sys.exit(1)
    print("OK", 0, [])

main()
