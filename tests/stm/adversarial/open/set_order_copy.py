"""Iteration order / pop() of a shared set after the section's own write.
S grew to 200 ints and shrank back to {1, 8, 300}: its table is still large, so
plain Python iterates [1, 8, 300] and pop() returns 1. A fresh copy (small
table) iterates [8, 1, 300]-like and pops 8.
Serial invariant (plain Python, deterministic for ints): after S.add(1000),
list(S) and S.pop() are what the live set gives (computed by replaying the same
operations on a set with the same history: REF).
"""
import transaction

def build():
    s = set(range(200))
    for x in range(200):
        if x not in (1, 8):
            s.discard(x)
    s.add(300)
    return s

S = build()
OUT = []

import os
FORM = os.environ.get("FORM", "own")

def step(i):
    if FORM == "own":
        S.add(1000)
    else:
        S_ = S  # read-only: no write before the reads
    order = [x for x in S]
    first = next(iter(S))
    popped = S.pop() if FORM != "ro2" else None
    OUT.append((order, first, popped))

def main():
    ref = build()
    if FORM == "own":
        ref.add(1000)
    want = (list(ref), next(iter(ref)), ref.pop() if FORM != "ro2" else None)
    transaction.add(step, 0)
    transaction.run()
    got = OUT[0]
    print("OK" if got == want else "BAD", "got", got, "want", want, "final", sorted(S), "ref", sorted(ref))

main()
