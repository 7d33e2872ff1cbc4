"""A background thread and the queued calls both bump a counter holding one threading.Lock.

Serial invariant (plain Python): every increment holds LOCK; after run()
and joining the thread, CNT["n"] == K + M. Nothing can deadlock: there is
one lock.

Attacks: plain code (the started thread) holding the lock waited for W
for its write while an inevitable section holding W waited for the lock
(a hang), and before that the sections' optimistic increments lost some
of the thread's. Now plain code's ``with lock:`` holds W for its block,
and sections become inevitable before entering a lock.
"""
import threading
import transaction

K = 1000
M = 1000
LOCK = threading.Lock()
CNT = {"n": 0}


def background():
    for _ in range(M):
        with LOCK:
            CNT["n"] += 1


def step(i):
    with LOCK:
        CNT["n"] += 1


def main():
    t = threading.Thread(target=background)
    for i in range(K):
        transaction.add(step, i)
    t.start()
    transaction.run()
    t.join(20)
    print("OK" if CNT["n"] == K + M and not t.is_alive() else "BAD", CNT["n"], t.is_alive())


main()
