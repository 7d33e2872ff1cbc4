"""Queued calls take one threading.Lock; some do an irrevocable call (time.sleep(0)) inside it.

Serial invariant: every call runs to its end; CNT["n"] == K at the end.
One lock, no thread holds it while waiting for anything else: plain Python
cannot deadlock.

Attacks: a ``with LOCK:`` taken by an optimistic section that then had to
become inevitable waited for W holding the lock, while an inevitable
section holding W waited for the lock (a hang). Now a section becomes
inevitable before it enters a lock, so every lock is taken after W.
"""
import threading
import time
import transaction

K = 400
LOCK = threading.Lock()
CNT = {"n": 0}


def step(i):
    if i % 3 == 0:
        time.sleep(0)           # inevitable before the lock
    with LOCK:
        v = CNT["n"]
        for _ in range(200):
            pass
        if i % 3 == 1:
            time.sleep(0)       # inevitable while holding the lock
        CNT["n"] = v + 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    print("OK" if CNT["n"] == K else "BAD", CNT["n"], K)


main()
