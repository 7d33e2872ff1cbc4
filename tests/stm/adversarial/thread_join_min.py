"""A call starts a helper thread running an application function and joins it.

Serial invariant (plain Python): the helper adds 1 to ``STATE["n"]`` and
ends; ``join()`` returns; after K calls ``STATE["n"] == K``. Nothing can
block: the caller only waits for a thread that needs nothing from it.

Attacks: the thread's target ran as one section, whose commit waited for W,
held by the inevitable caller waiting in ``join()``: a deadlock. Now a
started thread runs its code as plain code, and borrows the W of the section
that started it while that section keeps W.
"""
import threading
import transaction

K = 2
STATE = {"n": 0}
stuck = []


def helper():
    STATE["n"] += 1


def step(i):
    t = threading.Thread(target=helper)
    t.start()
    t.join(3)
    if t.is_alive():
        stuck.append(i)


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    print("BAD stuck" if stuck else "OK", stuck, STATE)


main()
