"""Objects with a ``__del__`` that an attempt makes where the call barrier does not see the class called.

map(Cls, ...), itertools.starmap, functools.partial(Cls)(...), sorted(key=Cls),
Cls.__new__ + __init__, copy.copy of one, and a direct call; each finalizer
journals its object into shared state, and attempts abort (a hot counter and
a mid-section read; more under faults).
Serial invariant: DELS holds each (form, i) exactly once per committed call,
no finalizer of an attempt that never happened commits, and no ``__del__``
raises (an application sys.unraisablehook records any).
Attacks: attributing a finalizer to the attempt that made its object (C code
calling the class, a library copying an object: the object was not in the
attempt's registry, so its finalizer ran as a section of its own and
committed; its attributes were in the dropped log, hence AttributeError),
and an object only the redo log kept alive dying after its commit's
publication (its finalizer wrote into a log already published).
"""
import copy
import functools
import itertools
import os
import transaction

N = int(os.environ.get("N", "240"))
HOT = {"n": 0, "m": 0}
DELS = []
FINALIZED = {"n": 0}
ERRS = []


def hook(u):
    ERRS.append(type(u.exc_value).__name__ + ": " + str(u.exc_value))


import sys
sys.unraisablehook = hook


class Rec:
    def __init__(self, tag, i=0):
        self.tag = tag
        self.i = i

    def __del__(self):
        FINALIZED["n"] += 1
        DELS.append((self.tag, self.i))

    def __lt__(self, other):
        return False


FORMS = ["map", "starmap", "partial", "sorted_key", "new_init", "copy", "direct"]
if os.environ.get("FORMSEL"):
    FORMS = os.environ["FORMSEL"].split(",")


def make(form, i):
    if form == "map":
        return list(map(Rec, ["map"], [i]))
    if form == "starmap":
        return list(itertools.starmap(Rec, [("starmap", i)]))
    if form == "partial":
        return [functools.partial(Rec, "partial")(i)]
    if form == "sorted_key":
        return sorted([i], key=lambda j: Rec("sorted_key", j))
    if form == "new_init":
        r = Rec.__new__(Rec)
        r.__init__("new_init", i)
        return [r]
    if form == "copy":
        proto = Rec("copy-proto", -1)
        c = copy.copy(proto)
        c.tag, c.i = "copy", i
        proto.tag = None           # the prototype's own __del__ is skipped below
        return [c]
    return [Rec("direct", i)]


def work(i):
    form = FORMS[i % len(FORMS)]
    objs = make(form, i)
    HOT["n"] += 1
    x = 0
    for j in range(3000):
        x += j
    HOT["m"] = HOT["n"] + 1
    del objs


for i in range(N):
    transaction.add(work, i)
transaction.run()
import gc
gc.collect()
from collections import Counter
dels = [d for d in DELS if d[0] is not None and d[0] != "copy-proto"]
c = Counter(dels)
exp = Counter((FORMS[i % len(FORMS)], i) for i in range(N))
extra = c - exp
missing = exp - c
byform = Counter(k[0] for k in extra.elements())
print("extra finalizer runs by form:", dict(byform), "missing:", len(missing), list(missing)[:3])
nrec = sum(2 if f == "copy" else 1 for f in (FORMS[i % len(FORMS)] for i in range(N)))
print("finalizer errors:", len(ERRS), ERRS[:2], "finalizer runs committed:", FINALIZED["n"], "expected", nrec)
print("OK" if not extra and not missing and not ERRS and FINALIZED["n"] == nrec else "BAD")
