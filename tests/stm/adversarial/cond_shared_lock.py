"""Producer sections, one consumer thread, a Condition built on a Lock
(as queue.Queue builds its own): the consumer waits with `with LOCK:` and
`COND.wait()`, the producers append under `with COND:` and notify.

Serial invariant (and plain threads): every produced item is consumed once:
CONSUMED == sorted(range(N)), and the program ends.
Attacks: plain code's `with lock:` holds W for its block
(barriers._lock_after_w); Condition.wait() inside releases the lock but not W,
so a producer section (inevitable for `with COND:`) waits for W for ever.
Red-team round 17: hung 4/4 on 2 threads. Plain code's with lock: no
longer holds W for its block; holders of W that may wait for a lock
(inevitable sections, steps) lend W to plain code instead.
"""
import sys
import threading
import transaction

N = 50
LOCK = threading.Lock()
COND = threading.Condition(LOCK)
ITEMS = []
CONSUMED = []
DONE = threading.Event()


def consumer():
    while len(CONSUMED) < N:
        with LOCK:
            while not ITEMS:
                COND.wait()
            item = ITEMS.pop(0)
        CONSUMED.append(item)
    DONE.set()


def produce(i):
    with COND:
        ITEMS.append(i)
        COND.notify()


T = threading.Thread(target=consumer, daemon=True)
T.start()


def main():
    for i in range(N):
        transaction.add(produce, i)
    transaction.run()
    if not DONE.wait(20):
        print("BAD consumer stuck", len(CONSUMED)); sys.exit(1)
    if sorted(CONSUMED) != list(range(N)):
        print("BAD", CONSUMED); sys.exit(1)
    print("OK", len(CONSUMED))


main()
