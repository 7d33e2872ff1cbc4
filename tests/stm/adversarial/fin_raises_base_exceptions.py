"""Finalizers that raise, under the DEFAULT sys.unraisablehook, with sys.stderr captured in a
StringIO: each report starts with an "Exception ignored in" line. Objects are made by calls
that may abort (hot counter + work); KIND picks what the finalizer raises: ValueError,
SystemExit, KeyboardInterrupt, a weakref.finalize callback raising ValueError, a generator
whose finally raises when it is collected.
Serial invariant: exactly N reports (one per committed object), each naming the right
exception type; no report mentions tornado_stm; every call committed once (COUNT == N).
Attacks: a finalizer raising SystemExit or KeyboardInterrupt escaped the engine's catch of
Exception, and CPython reported it for attempts that aborted too.
"""
import io
import os
import sys
import weakref
import transaction

N = int(os.environ.get("N", "200"))
KINDS = os.environ.get("KINDS", "value,sysexit,kbint,finalize,genfinally").split(",")
HOT = {"n": 0}
COUNT = {"n": 0}
buf = io.StringIO()
real_err = sys.stderr
sys.stderr = buf


class Boom:
    def __init__(self, kind):
        self.kind = kind

    def __del__(self):
        if self.kind == "value":
            raise ValueError("boom-value")
        if self.kind == "sysexit":
            raise SystemExit("boom-exit")
        if self.kind == "kbint":
            raise KeyboardInterrupt("boom-kb")


class Plain:
    pass


def cb():
    raise ValueError("boom-finalize")


def gen():
    try:
        yield 1
        yield 2
    finally:
        raise ValueError("boom-gen")


def work(i):
    kind = KINDS[i % len(KINDS)]
    if kind == "finalize":
        p = Plain()
        weakref.finalize(p, cb)
        obj = p
    elif kind == "genfinally":
        g = gen()
        next(g)
        obj = g
    else:
        obj = Boom(kind)
    HOT["n"] += 1
    x = 0
    for j in range(3000):
        x += j
    HOT["m"] = HOT["n"]
    COUNT["n"] += 1
    del obj


for i in range(N):
    transaction.add(work, i)
transaction.run()
import gc
gc.collect()
sys.stderr = real_err
text = buf.getvalue()
lines = [l for l in text.splitlines() if l.startswith("Exception ignored")]
from collections import Counter
kinds = Counter(l.split(":")[0] for l in text.splitlines()
                if l.split(":")[0] in ("ValueError", "SystemExit", "KeyboardInterrupt"))
exp = Counter()
for i in range(N):
    k = KINDS[i % len(KINDS)]
    exp[{"value": "ValueError", "sysexit": "SystemExit", "kbint": "KeyboardInterrupt"}.get(k, "ValueError")] += 1
eng = "tornado_stm" in text
print("reports", len(lines), "expected", N, "by type", dict(kinds), "expected", dict(exp),
      "count", COUNT["n"], "engine frames in reports", eng)
pass
print("OK" if len(lines) == N and kinds == exp and COUNT["n"] == N else "BAD")
