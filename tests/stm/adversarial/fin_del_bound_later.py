"""``__del__`` bound other than by a plain ``def __del__`` in the class body.

Three classes get the same finalizer function: one under an ``if`` in its
class body, one by ``Later.__del__ = finalize`` at the top level after a
first run() made and dropped instances without one, and one by a call that
sets it from inside a section. Each call makes an instance, bumps a hot
counter, works, and drops it; the finalizer works, reads the hot counter and
journals the instance.
Serial invariant: each instance made while its class had a ``__del__`` is
journaled exactly once, and no finalizer raises (nothing reported on stderr).
Attacks: a finalizer bound where the instrumenter did not look (nested in the
class body, set on the class afterwards): the engine's abort escaped it into
CPython's unraisable hook; the cached answer "this class has no finalizer"
outlived the class getting one.
"""
import io
import sys
from collections import Counter

import transaction

N = 150
HOT = {"n": 0}
JOURNAL = []
STDERR = sys.stderr
sys.stderr = io.StringIO()      # where CPython reports an exception a finalizer raised
WITH_FINALIZER = True


def finalize(self):
    x = 0
    for j in range(2000):
        x += j
    x += HOT["n"]
    JOURNAL.append((type(self).__name__, self.i))


class Nested:
    def __init__(self, i):
        self.i = i

    if WITH_FINALIZER:
        __del__ = finalize


class Later:
    def __init__(self, i):
        self.i = i


class InCall:
    def __init__(self, i):
        self.i = i


def work(kind, i):
    obj = kind(i)
    HOT["n"] += 1
    x = 0
    for j in range(2000):
        x += j
    HOT["m"] = HOT["n"]
    del obj


def bind_in_call():
    InCall.__del__ = finalize


for i in range(N):
    transaction.add(work, Later, i)
    transaction.add(work, InCall, i)
transaction.run()
Later.__del__ = finalize
transaction.add(bind_in_call)
transaction.run()
for i in range(N):
    transaction.add(work, Nested, i)
    transaction.add(work, Later, i)
    transaction.add(work, InCall, i)
transaction.run()
reports = sys.stderr.getvalue()
sys.stderr = STDERR
counts = Counter(JOURNAL)
twice = sorted(key for key, seen in counts.items() if seen != 1)
print(HOT, len(JOURNAL), twice[:5], reports.count("Exception ignored"), reports[-300:])
print("OK" if len(JOURNAL) == 3 * N and not twice and "Exception ignored" not in reports else "BAD")
