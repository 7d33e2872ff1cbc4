"""A resource class whose __del__ stamps its release time (time.monotonic()) into
a shared log, as connection/lease wrappers do. Sections make resources and
update a hot shared counter (so attempts abort now and then: the aborted
attempts' resources are finalized too). A second run() then has 300 ordinary
sections that read time.monotonic() and write a shared dict.
Serial invariant: every kept release stamp is in order, the counters are exact,
and run 2 takes what its work takes (serial: ~0.1 s; we allow 5 s).
Attacks: section._after_abort frees an aborted attempt's objects while a
throwaway, doomed Transaction (the "sink") is current; a finalizer reading a
clock there goes through specials._special_clock -> Transaction.read_clock, which
registers the sink in txn._CLOCK_READERS -- and nothing ever commits or
discards the sink, so it stays registered for good: every later clock reader's
commit waits the full CLOCK_ORDER_WAIT (0.25 s) for it
(wait_for_earlier_clock_readers).
"""
import time
import transaction

RELEASED = []
HOT = {"n": 0}
STATE = {"n": 0}


class Lease:
    def __init__(self, i):
        self.i = i

    def __del__(self):
        RELEASED.append(time.monotonic())


def use(i):
    lease = Lease(i)
    HOT["n"] += 1
    s = 0
    for j in range(3000):
        s += j
    del lease


def tick(i):
    t = time.monotonic()
    STATE["n"] += 1
    STATE["last"] = t


import os
N2 = int(os.environ.get("N2", "300"))
t0 = time.monotonic()
for i in range(300):
    transaction.add(use, i)
transaction.run()
print("run 1 %.2f s" % (time.monotonic() - t0), flush=True)
start = time.monotonic()
for i in range(N2):
    transaction.add(tick, i)
transaction.run()
elapsed = time.monotonic() - start
bad = []
if HOT["n"] != 300 or STATE["n"] != N2:
    bad.append(("counts", HOT["n"], STATE["n"]))
if RELEASED != sorted(RELEASED):
    bad.append(("release stamps out of order",))
if elapsed > 5:
    bad.append(("run 2 slow", round(elapsed, 2)))
print("released", len(RELEASED), "run 2 %.2f s" % elapsed)
print("BAD" if bad else "OK", bad)
raise SystemExit(1 if bad else 0)
