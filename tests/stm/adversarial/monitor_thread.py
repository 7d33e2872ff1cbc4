"""A progress monitor on a thread of the script's own polls a shared counter while ``run()`` works.

Serial invariant (plain Python): the monitor sees ``STATE["done"]`` reach
K (every call adds 1) and stops; nothing waits on the monitor, so the
script always finishes and the monitor saw the end. (It gives up after
10 s to keep the test short.)

Attacks: the monitor thread's target ran as one section: it never saw the
workers' commits, and once ``time.sleep`` made it inevitable it held W, so
they could not commit either. Now a thread's code runs as plain code (as the
module body does).
"""
import threading
import time
import transaction

K = 200
STATE = {"done": 0}
SEEN = {"max": 0, "gave_up": False}


def monitor():
    deadline = time.monotonic() + 10
    while STATE["done"] < K:
        if time.monotonic() > deadline:
            SEEN["gave_up"] = True
            return
        SEEN["max"] = STATE["done"]
        time.sleep(0.01)
    SEEN["max"] = STATE["done"]


def step(i):
    STATE["done"] += 1


def main():
    t = threading.Thread(target=monitor)
    t.start()
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    t.join()
    ok = STATE["done"] == K and SEEN == {"max": K, "gave_up": False}
    print("OK" if ok else "BAD", STATE, SEEN)


main()
