"""Objects with a __del__ (journaling (tag, i) into shared state) made by an attempt in more ways
C / library code builds them: map() of a __slots__ class, starmap of a slots class,
copy.deepcopy of a list holding one, pickle round trip of a list, pickle of the object itself,
dataclasses.replace, functools.reduce building a chain, a comprehension inside a key function
called by sorted(), a __reduce__-less copy of a slots object, object.__new__ + setattr.
Attempts abort (hot counter + mid-section read; more under faults).
Serial invariant: DELS holds each (tag, i) exactly once per committed object, no finalizer
raises (application sys.unraisablehook records any).
Attacks: an instance of a __slots__ class with a __del__ built by C code (map, starmap) was
never noted as the attempt's (no __dict__ to find empty), so its finalizer ran for an aborted
attempt and raised AttributeError.
"""
import copy
import dataclasses
import functools
import itertools
import os
import pickle
import sys
import transaction

N = int(os.environ.get("N", "240"))
HOT = {"n": 0, "m": 0}
DELS = []
ERRS = []


def hook(u):
    ERRS.append(type(u.exc_value).__name__ + ": " + str(u.exc_value))


sys.unraisablehook = hook


class Rec:
    def __init__(self, tag, i=0):
        self.tag = tag
        self.i = i

    def __del__(self):
        DELS.append((self.tag, self.i))


class SRec:
    __slots__ = ("tag", "i")

    def __init__(self, tag, i=0):
        self.tag = tag
        self.i = i

    def __del__(self):
        DELS.append((self.tag, self.i))


@dataclasses.dataclass
class DRec:
    tag: str
    i: int

    def __del__(self):
        DELS.append((self.tag, self.i))


FORMS = ["slots_map", "slots_starmap", "deepcopy_list", "pickle_list", "pickle_obj",
         "dc_replace", "reduce_chain", "sorted_comp", "slots_copy", "new_setattr"]
if os.environ.get("FORMSEL"):
    FORMS = os.environ["FORMSEL"].split(",")

PROTO = Rec(None, -1)          # shared prototypes (their own finalizers journal None)
SPROTO = SRec(None, -1)
DPROTO = DRec(None, -1)


def make(form, i):
    """Returns the objects; expected tags are (form, i)."""
    if form == "slots_map":
        return list(map(SRec, [form], [i]))
    if form == "slots_starmap":
        return list(itertools.starmap(SRec, [(form, i)]))
    if form == "deepcopy_list":
        objs = copy.deepcopy([PROTO])
        objs[0].tag, objs[0].i = form, i
        return objs
    if form == "pickle_list":
        objs = pickle.loads(pickle.dumps([Rec(form, i)]))
        # the original made here dies too: journal it apart
        return objs
    if form == "pickle_obj":
        return [pickle.loads(pickle.dumps(Rec(form, i)))]
    if form == "dc_replace":
        return [dataclasses.replace(DPROTO, tag=form, i=i)]
    if form == "reduce_chain":
        return [functools.reduce(lambda acc, k: Rec(form, i) if acc is None else acc, [1, 2], None)]
    if form == "sorted_comp":
        keep = []
        sorted([3, 1, 2], key=lambda j: len([keep.append(Rec(form, i)) for _ in range(j == 1)]))
        return keep
    if form == "slots_copy":
        c = copy.copy(SPROTO)
        c.tag, c.i = form, i
        return [c]
    if form == "new_setattr":
        r = object.__new__(Rec)
        r.tag = form
        r.i = i
        return [r]
    raise ValueError(form)


EXPECT = {"pickle_list": 2, "pickle_obj": 2}


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
del PROTO, SPROTO, DPROTO
import gc
gc.collect()
from collections import Counter
c = Counter(d for d in DELS if d[0] is not None)
exp = Counter()
for i in range(N):
    f = FORMS[i % len(FORMS)]
    exp[(f, i)] = EXPECT.get(f, 1)
extra = c - exp
missing = exp - c
print("extra by form:", dict(Counter(k[0] for k in extra.elements())),
      "missing by form:", dict(Counter(k[0] for k in missing.elements())))
print("finalizer errors:", len(ERRS), ERRS[:3])
print("OK" if not extra and not missing and not ERRS else "BAD")
