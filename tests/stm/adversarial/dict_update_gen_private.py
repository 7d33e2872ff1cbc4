"""Minimal: a dict the section builds itself, filled by update() from a generator
that reads it (dense ids for the distinct words). No shared state at all.
Serial invariant: build("abacbd") == {'a': 0, 'b': 1, 'c': 2, 'd': 3} in and out of sections.
Attacks: calls.pairs_as_read turns the section's generator into a list before dict's C code runs.
"""
import transaction
R = {}
def build(words):
    d = {}
    d.update((w, len(d)) for w in words if w not in d)
    return d
def sec():
    R["sec"] = build("abacbd")
transaction.add(sec)
transaction.run()
R["outside"] = build("abacbd")
print(R)
import sys
if R["sec"] != R["outside"]:
    print("BAD")
    sys.exit(1)
print("OK")
