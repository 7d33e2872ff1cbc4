"""A ThreadPoolExecutor with an initializer that registers each pool thread;
each call hands a job to it and waits for the result.

Serial invariant (and plain threads): every job's result is recorded once,
and each pool thread registered itself once: sorted(RESULTS) == ..., len(THREADS) <= 2.
Attacks: the pool's threads start inside a section (ThreadPoolExecutor starts
them lazily, in submit); specials.handing_work_to_a_thread wraps only the
task, so the application's initializer runs on the new thread as a section of
its own, whose commit needs the W the waiting section holds.
Red-team round 17: TimeoutError 1/1 on 2 threads. The executor's
initializer, when the application's, runs as plain code too.
"""
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
import transaction

N = 6
THREADS = []
RESULTS = []


def init():
    THREADS.append(threading.get_ident())


EXEC = ThreadPoolExecutor(2, initializer=init)


def work(i):
    return i * i


def job(i):
    RESULTS.append(EXEC.submit(work, i).result(timeout=10))


def main():
    for i in range(N):
        transaction.add(job, i)
    try:
        transaction.run()
    except Exception as e:
        print("BAD raised", repr(e)); sys.exit(1)
    finally:
        EXEC.shutdown(wait=False, cancel_futures=True)
    if sorted(RESULTS) != [i * i for i in range(N)] or not 1 <= len(THREADS) <= 2:
        print("BAD", RESULTS, THREADS); sys.exit(1)
    print("OK", len(RESULTS), len(THREADS))


main()
