"""multiprocessing.pool.ThreadPool used inside a queued call.

Serial invariant: each call maps ``work`` over three numbers on a thread
pool made at import and adds the results; the total is the sum of all
squares, and the run ends.
Attacks: the engine lends a section's W to the tasks of a
``concurrent.futures.ThreadPoolExecutor`` (specials.handing_work_to_a_thread);
``multiprocessing.pool.ThreadPool.map`` is another pool whose threads call
application code: the section is inevitable (unknown call) and holds W,
while the pool's threads each run ``work`` as a section that needs W.
Red-team round 16: hung 1/1 on 2 threads and on the serial backend;
ThreadPool's methods now hand their work over as the executor's do.
"""
import sys
from multiprocessing.pool import ThreadPool
import transaction

N = 40
POOL = ThreadPool(2)
total = [0]
done = []


def work(x):
    done.append(x)
    return x * x


def step(i):
    res = POOL.map(work, [i, i + 1, i + 2])
    total[0] += sum(res)


def main():
    for i in range(N):
        transaction.add(step, i)
    transaction.run()
    POOL.close(); POOL.join()
    exp = sum(x * x for i in range(N) for x in (i, i + 1, i + 2))
    if total[0] != exp or len(done) != 3 * N:
        print("BAD", total[0], exp, len(done)); sys.exit(1)
    print("OK", total[0])


main()
