"""A queue worker started at top level with the low-level _thread.start_new_thread;
each queued call puts a job and waits for it (Q.join()).

Serial invariant (and plain threads): every job done once; the program ends.
Attacks: section.watch_thread_starts patches threading.Thread.start only; a
thread started with _thread.start_new_thread runs its application function as
one section (run_section), inevitable at Q.get(), holding W for ever.
Red-team round 17: hung 1/1 on 2 threads; section.watch_thread_starts now
also makes _thread.start_new_thread at the top level start plain code.
"""
import _thread
import queue
import sys
import transaction

Q = queue.Queue()
DONE = []
N = 20


def worker():
    while True:
        job = Q.get()
        DONE.append(job)
        Q.task_done()


_thread.start_new_thread(worker, ())


def call(i):
    Q.put(i)
    Q.join()


def main():
    for i in range(N):
        transaction.add(call, i)
    transaction.run()
    if sorted(DONE) != list(range(N)):
        print("BAD", DONE); sys.exit(1)
    print("OK", len(DONE))


main()
