"""Each form looks a key whose __hash__ is application code up in a shared dict/set
once (in plain Python: exactly one __hash__ call per lookup), inside a section,
and counts the __hash__ calls.
Serial invariant: every form makes exactly as many __hash__ calls as the same
code run outside a section (plain Python).
Attacks: the dict/set read barriers hash the key themselves (redo-log lookups,
shadow lookups) and then let CPython hash it again: application __hash__ runs
more often than in any serial run (counters, caches, expensive hashes).
"""
import transaction

D = {k: k for k in range(20)}
S = set(range(20))
HASHES = {"n": 0}
OUT = {}


class K:
    def __init__(self, i):
        self.i = i

    def __hash__(self):
        HASHES["n"] += 1
        return self.i

    def __eq__(self, other):
        return isinstance(other, K) and other.i == self.i


FORMS = {
    "get": lambda: D.get(K(3)),
    "get_tuple": lambda: D.get((K(3),)),
    "getitem_missing": lambda: (K(3) in D),
    "contains_set": lambda: (K(3) in S),
    "setitem": lambda: D.__setitem__(K(100), 1),
    "sub_setitem": lambda: setitem(K(101)),
    "set_add": lambda: S.add(K(102)),
    "pop": lambda: D.pop(K(999), None),
    "setdefault": lambda: D.setdefault(K(103), 0),
    "discard": lambda: S.discard(K(998)),
    "tuple_key_setitem": lambda: setitem((K(104), 1)),
    "getitem_write_then_get": lambda: (setitem(K(105)), D.get(K(105))),
}


def setitem(k):
    D[k] = 1


def run_form(name):
    before = HASHES["n"]
    FORMS[name]()
    OUT[name] = HASHES["n"] - before


for name in FORMS:
    transaction.add(run_form, name)
transaction.run()
inside = dict(OUT)
# the same forms, plain, outside any section
D = {k: k for k in range(20)}
S = set(range(20))
outside = {}
for name in FORMS:
    before = HASHES["n"]
    FORMS[name]()
    outside[name] = HASHES["n"] - before
bad = [(n, inside.get(n), outside[n]) for n in FORMS if inside.get(n) != outside[n]]
print("inside", inside)
print("outside", outside)
print(bad)
print("BAD" if bad else "OK")
raise SystemExit(1 if bad else 0)
