"""Each queued call handles one "request": it puts the request's payload in a
context variable (CURRENT.set(payload), never reset, as asyncio-style code
does when the context is thrown away), works with it, and drops it.
Serial invariant: at most two payloads (the current one and the one the var
held before) are alive at a time: peak RSS grows by a few MB, whatever the
number of calls (we allow 60 MB over the start).
Attacks: run_context._set_keeping_the_token (round 21's J6 fix) keeps EVERY
token made by ContextVar.set in the module dict _TOKENS (then up to 100,000 of them)
until it is reset; a token holds its old_value, i.e. the previous payload:
none of them is ever freed -- a memory blow-up no serial run has.
"""
import contextvars
import resource
import transaction

CURRENT = contextvars.ContextVar("CURRENT", default=None)
N = 1500
SIZE = 200_000
DONE = {"n": 0, "bytes": 0}


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def handle(i):
    payload = bytearray(SIZE)
    payload[0] = i % 256
    CURRENT.set(payload)
    DONE["n"] += 1
    DONE["bytes"] += len(CURRENT.get())


start = rss_mb()
for i in range(N):
    transaction.add(handle, i)
transaction.run()
grown = rss_mb() - start
print("calls", DONE["n"], "peak RSS grew %.0f MB" % grown)
ok = DONE["n"] == N and grown < 60
print("OK" if ok else "BAD")
raise SystemExit(0 if ok else 1)
