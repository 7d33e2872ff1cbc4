"""Each call hands a job to a ThreadPoolExecutor, registers a done-callback
that records the result and sets an Event, and waits for the Event.

Serial invariant (and plain threads): every result recorded once, program ends.
Attacks: the done-callback (an application function) runs on the pool's
thread (started inside a section, so not plain code) as a section of its own
and needs the W that the section waiting on the Event holds;
specials.handing_work_to_a_thread wraps only submit's task.
Red-team round 17: passed only because the pool's thread kept borrowing
the W of the section it had served (which let a done-callback section
commit inside another section: borrowed_commit_lost); the loan now ends
with the task, and add_done_callback hands the callback over as plain code.
"""
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
import transaction

N = 6
EXEC = ThreadPoolExecutor(2)
RESULTS = []


def work(i):
    x = 0
    for k in range(20000):
        x += k
    return i


def job(i):
    ev = threading.Event()

    def on_done(fut):
        RESULTS.append(fut.result())
        ev.set()

    EXEC.submit(work, i).add_done_callback(on_done)
    if not ev.wait(10):
        raise TimeoutError("callback never ran")


def main():
    for i in range(N):
        transaction.add(job, i)
    try:
        transaction.run()
    except Exception as e:
        print("BAD raised", repr(e)); sys.exit(1)
    finally:
        EXEC.shutdown(wait=False)
    if sorted(RESULTS) != list(range(N)):
        print("BAD", RESULTS); sys.exit(1)
    print("OK", RESULTS)


main()
