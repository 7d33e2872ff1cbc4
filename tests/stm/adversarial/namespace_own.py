"""types.SimpleNamespace and argparse.Namespace instances as shared config
objects. A section bumps an attribute and then compares / reprs the object
(C or library __eq__/__repr__ reading attributes).
Serial invariant: right after ns.n += 1, ns != other (other lags by one) and
repr shows the new n; at the end both are equal to the number of calls.

Attacks: types.SimpleNamespace, a C type whose ==, repr and format read its
attribute dict in C, after the section's own buffered attribute write.
"""
import sys
import argparse
from types import SimpleNamespace
import transaction

NS = SimpleNamespace(n=0, tag="t")
SHADOW = SimpleNamespace(n=0, tag="t")
AP = argparse.Namespace(n=0)
AP2 = argparse.Namespace(n=0)
bad = []

def step(i):
    NS.n += 1
    if NS == SHADOW:
        bad.append(("SimpleNamespace == after own write", i))
    if ("n=%d" % NS.n) not in repr(NS):
        bad.append(("SimpleNamespace repr misses own write", i, repr(NS), NS.n))
    SHADOW.n += 1
    AP.n += 1
    if AP == AP2:
        bad.append(("argparse.Namespace == after own write", i))
    if vars(AP)["n"] != AP.n:
        bad.append(("vars(ns) stale", i))
    AP2.n += 1

def main():
    for i in range(200):
        transaction.add(step, i)
    transaction.run()
    if NS.n != 200 or SHADOW.n != 200 or AP.n != 200 or AP2.n != 200:
        bad.append(("final", NS, SHADOW, AP, AP2))
    if bad:
        print("BAD", len(bad), sorted({b[0] for b in bad}), bad[:2]); sys.exit(1)
    print("OK", 0, [])

main()
