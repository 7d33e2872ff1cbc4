"""A section starts a helper with _thread.start_new_thread(app_fn, (i, done)) and
waits for it on a lock handshake (done.acquire()); the helper writes shared
state, then releases. Serial invariant (plain Python too): no hang; TOTAL == sum(range(N)).
Red-team round 18: hung in every mode; _thread.start_new_thread in a section
is a special, as Thread.start is: the helper runs plain code borrowing W.
Attacks: a thread started with _thread.start_new_thread inside a section,
whose application function ran as a section waiting for the starter's W.
"""
import sys, threading, functools, _thread
import transaction

TOTAL = [0]
N = 3


def work(i):
    TOTAL[0] += i


def work_ll(i, done):
    TOTAL[0] += i
    done.release()


def step(i):
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(work_ll, (i, done))
    done.acquire()


def main():
    for i in range(N):
        transaction.add(step, i)
    transaction.run()
    if TOTAL[0] != sum(range(N)):
        print("BAD", TOTAL[0]); sys.exit(1)
    print("OK", TOTAL[0])


main()
