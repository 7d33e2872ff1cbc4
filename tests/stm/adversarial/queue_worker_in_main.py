"""A background worker thread (started by the script) serving a queue.Queue;
each queued call hands it a job and waits for it with Queue.join().

Serial invariant: every job is processed once, before its call returns:
at the end processed == list of all jobs, and each call saw its own job done.
Attacks: a thread the application started runs as plain code and takes W
for its writes; a section waiting for it (Queue.join is unknown code, so
the section is inevitable and holds W) never lends it W (only threads
the section itself starts borrow its W).
Red-team round 16: hung 1/1 on 2 threads. An inevitable section now lends
W to every thread running plain code (WorldLock.open_to_plain_code).
"""
import queue
import sys
import threading
import transaction

N = 20
Q = queue.Queue()
processed = []
missed = []


def worker():
    while True:
        job = Q.get()
        if job is None:
            Q.task_done()
            return
        processed.append(job)
        Q.task_done()


T = threading.Thread(target=worker, daemon=True)



def step(i):
    Q.put(i)
    Q.join()
    if i not in processed:
        missed.append(i)


def main():
    T.start()
    for i in range(N):
        transaction.add(step, i)
    transaction.run()
    Q.put(None)
    T.join(5)
    if sorted(processed) != list(range(N)) or missed:
        print("BAD", len(processed), missed[:5]); sys.exit(1)
    print("OK", len(processed))


main()
