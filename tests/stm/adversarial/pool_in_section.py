"""ThreadPoolExecutor inside a section: map over an application function writing shared state.

Serial invariant: each call runs 3 tasks on a pool and waits for them;
each task appends (i, j) to OUT under LOCK; the call then bumps DONE.
After K calls: len(OUT) == 3*K, DONE["n"] == K, and no call hangs.
Attacks: a thread pool's threads, started by library code, ran each task
as a section of its own, which needed the W the waiting section held (a
hang); the tasks now borrow the submitting section's W, as threads the
application starts do.
"""
import threading
import transaction
from concurrent.futures import ThreadPoolExecutor

K = 40
OUT = []
LOCK = threading.Lock()
DONE = {"n": 0}


def task(i, j):
    with LOCK:
        OUT.append((i, j))
    return j * 2


def step(i):
    with ThreadPoolExecutor(2) as ex:
        got = list(ex.map(task, [i] * 3, range(3)))
    if got != [0, 2, 4]:
        raise RuntimeError(got)
    DONE["n"] += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    ok = len(OUT) == 3 * K and DONE["n"] == K
    print("OK" if ok else "BAD", len(OUT), DONE["n"])


main()
