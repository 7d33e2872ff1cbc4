"""Jobs handed to a multiprocessing.pool.ThreadPool with apply_async and a
completion callback that records the result; the call waits with .get().

Serial invariant (and plain threads): every job's result is recorded once:
sorted(DONE) == [2*i for i in range(N)] and the program ends.
Attacks: the callback (an application function) runs on the pool's result
thread (made inside a section) BEFORE the result's event is set; it is a section of its own there and
needs W, which the waiting section holds (specials.handing_work_to_a_thread
wraps only the task, not callback=/error_callback=).
Red-team round 17: TimeoutError 1/1 on 2 threads. A ThreadPool's callback
and error_callback, when the application's, run as plain code too.
"""
import sys
from multiprocessing.pool import ThreadPool
import transaction

N = 6
POOLS = []
DONE = []


def work(i):
    return 2 * i


def on_done(value):
    DONE.append(value)


def make_pool():
    POOLS.append(ThreadPool(2))


def job(i):
    r = POOLS[0].apply_async(work, (i,), callback=on_done)
    r.get(timeout=10)   # (plain Python: returns at once)


def main():
    transaction.add(make_pool)
    transaction.run()
    for i in range(N):
        transaction.add(job, i)
    try:
        transaction.run()
    except Exception as e:
        POOLS[0].terminate()
        print("BAD raised", repr(e)); sys.exit(1)
    POOLS[0].close(); POOLS[0].join()
    if sorted(DONE) != [2 * i for i in range(N)]:
        print("BAD", DONE); sys.exit(1)
    print("OK", len(DONE))


main()
