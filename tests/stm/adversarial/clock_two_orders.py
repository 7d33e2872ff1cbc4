"""Two kinds of request handlers stamp their work with two clocks, in opposite
orders: kind A reads time.monotonic() (a latency timer) and later time.time()
(a wall-clock timestamp for a log record); kind B reads time.time() first and
time.monotonic() at the end.

Serial invariant: every record is kept, the monotonic and wall readings in
LOG never go back in commit order, and the whole run takes what its work takes
(serially: well under a second; we allow 8 s).
Attacks: txn.Transaction.wait_for_earlier_clock_readers -- a committing
clock reader waits (up to CLOCK_ORDER_WAIT = 0.25 s) for every running section
that read ANY of its clocks earlier (_read_earlier looks at each clock on its
own). A read mono then wall, B read wall then mono, overlapping: each read one
clock before the other, so each waits for the other the full 0.25 s, then one
of them aborts anyway (check_clock_order) -- a 0.25 s stall per overlapping
pair, a time blow-up no serial run has.
"""
import os
import time
import transaction

FORM = os.environ.get("FORM", "opposite")   # "same": every section reads mono then wall (control)

N = 400
LOG = []
STATS = {"n": 0}


def work(k):
    s = 0
    for j in range(k):
        s += j * j
    return s


def kind_a(i):
    t0 = time.monotonic()
    work(3000)
    wall = time.time() if FORM != "one" else t0
    LOG.append(("a", i, t0, wall))
    STATS["n"] += 1


def kind_b(i):
    wall = time.time()
    work(3000)
    t1 = time.monotonic()
    LOG.append(("b", i, t1, wall))
    STATS["n"] += 1


start = time.monotonic()
for i in range(N):
    transaction.add(kind_a if (i % 2 == 0 or FORM != "opposite") else kind_b, i)
transaction.run()
elapsed = time.monotonic() - start

bad = []
if STATS["n"] != N or len(LOG) != N:
    bad.append(("count", STATS["n"], len(LOG)))
for prev, cur in zip(LOG, LOG[1:]):
    if cur[2] < prev[2] or cur[3] < prev[3]:
        bad.append(("back", prev, cur))
        break
print("elapsed %.2f s" % elapsed)
if elapsed > 8.0:
    bad.append(("slow", round(elapsed, 2)))
print("BAD" if bad else "OK", bad[:3])
raise SystemExit(1 if bad else 0)
