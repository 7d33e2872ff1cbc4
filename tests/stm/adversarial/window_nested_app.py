"""Readers call a pure method of a shared set/dict with a plain list holding
application objects whose __hash__ is application code (slow, and counting its
calls in a per-call private list), while writers keep changing the set/dict.
Serial invariant: each reader's call hashes each of its 6 probes exactly once:
len(calls) == 6 for every reader (issuperset: 1, it stops at the first miss), and the
shared counter HASHES["n"] == 6 * readers (plain CPython: always).
Attacks: calls._may_call_again looks at the top-level argument type only (list:
builtins -> repeatable), so calls._read_window / Transaction.versioned may run
S.union(probes) again when a writer commits during the call: the nested
application __hash__ runs again (its effects, here appends to a list the section
made, are not undone).
"""
import os
import transaction

FORM = os.environ.get("FORM", "union")
S = set(range(100))
D = {k: k for k in range(100)}
BAD = []
HASHES = {"n": 0}
READERS = {"n": 0}
N = 600


class Probe:
    def __init__(self, i, calls):
        self.i = i
        self.calls = calls

    def __hash__(self):
        self.calls.append(1)
        HASHES["n"] += 1
        y = 0
        for j in range(2000):
            y += j
        return 1000003 + self.i

    def __eq__(self, other):
        return self is other


def reader(i):
    READERS["n"] += 1
    calls = []
    probes = [Probe(i * 10 + k, calls) for k in range(6)]
    if FORM == "union":
        S.union(probes)
    elif FORM == "isdisjoint":
        S.isdisjoint(probes)
    elif FORM == "issuperset":
        S.issuperset(probes)
    elif FORM == "fromkeys_in":
        D.keys() - probes
    if len(calls) != (1 if FORM == "issuperset" else 6):
        BAD.append((i, len(calls)))


def writer(i):
    S.add(100 + i % 50)
    D[100 + i % 50] = i


for i in range(N):
    transaction.add(reader if i % 2 else writer, i)
transaction.run()
want = READERS["n"] * (1 if FORM == "issuperset" else 6)
if HASHES["n"] != want:
    BAD.append(("shared hash counter", HASHES["n"], want))
print(len(BAD), BAD[:5], BAD[-1:])
print("BAD" if BAD else "OK")
raise SystemExit(1 if BAD else 0)
