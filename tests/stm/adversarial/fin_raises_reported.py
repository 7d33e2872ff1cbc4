"""Finalizers that raise: each failure is reported once, as CPython reports it, and run() goes on.

Shared objects the script made (a connection with a failing ``__del__``, a
``weakref.finalize`` callback that raises, a half-run generator whose
``finally`` raises) are dropped by calls, so they die at those calls'
commits; calls also make and drop a failing object of their own while a hot
counter makes attempts abort. sys.stderr is a buffer here, so the program
counts the reports.
Serial invariant: run() returns normally; every object is dropped; stderr has
exactly one "Exception ignored in" report per object (shared or made by a
committed call), none for attempts that aborted and none about the hook itself.
Attacks: reporting a finalizer's exception to CPython's default unraisable hook
(it accepts only its own argument type: a TypeError once ended run()), reports
for attempts that never happened (an aborted attempt's objects die in the
engine's throwaway transaction).
"""
import io
import sys
import weakref

import transaction

N = 60
POOL = []
HOT = {"n": 0}
REMOVED = {"n": 0}


class Conn:
    def __init__(self, i):
        self.i = i

    def __del__(self):
        raise RuntimeError(f"conn {self.i} already closed")


class Resource:
    pass


def on_gone(i):
    raise RuntimeError(f"cleanup {i} failed")


def stream(i):
    try:
        yield i
        yield i
    finally:
        raise RuntimeError(f"stream {i} close failed")


def drop(i):
    POOL.pop()
    REMOVED["n"] += 1


def make_and_drop(i):
    lease = Conn(-i)
    HOT["n"] += 1
    x = 0
    for j in range(2000):
        x += j
    del lease


for i in range(N):
    POOL.append(Conn(i))
    resource = Resource()
    weakref.finalize(resource, on_gone, i)
    POOL.append(resource)
    generator = stream(i)
    next(generator)
    POOL.append(generator)
resource = generator = None
for i in range(3 * N):
    transaction.add(drop, i)
for i in range(N):
    transaction.add(make_and_drop, i)
captured = io.StringIO()
real_stderr, sys.stderr = sys.stderr, captured
try:
    transaction.run()
    outcome = "returned"
except BaseException as exc:
    outcome = f"raised {type(exc).__name__}: {exc}"
finally:
    sys.stderr = real_stderr
text = captured.getvalue()
reports = text.count("Exception ignored in:")
about_hook = text.count("sys.unraisablehook")
print(outcome, REMOVED, HOT, "reports", reports, "about the hook", about_hook)
ok = (outcome == "returned" and REMOVED["n"] == 3 * N and not POOL and HOT["n"] == N
      and reports == 4 * N and about_hook == 0)
print("OK" if ok else f"BAD {text[-600:]!r}")
