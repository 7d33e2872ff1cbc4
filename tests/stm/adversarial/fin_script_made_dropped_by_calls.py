"""Objects the script made before run(), with a ``__del__``, dropped by calls.

Free-threaded CPython frees such an object on the thread that made it (the
script's, waiting in run()), so its finalizer runs there. First run: 1000
objects whose ``__del__`` journals itself, each dropped by its own call.
Second run: 50 objects whose ``__del__`` queues a follow-up call with
``transaction.add``. Third: the same, the calls run by a queue of the
script's own (``TransactionQueue().run()``).
Serial invariant: every finalizer runs once, and every follow-up runs once,
inside the run that dropped its object (on the queue that runs it): each
journal holds every number once.
Attacks: finalizers put off together ran each from the end of the previous
one's section, nested a thousand deep (RecursionError, finalizers lost);
the workers ended the run before a finalizer on the script's thread queued
its follow-up (it ran in the next run(), or never); the follow-up went to
the default queue instead of the running one.
"""
import transaction

DONE = []
FOLLOWED = []
POOL = {}


class Journaled:
    def __init__(self, i):
        self.i = i

    def __del__(self):
        DONE.append(self.i)


class Queuing:
    def __init__(self, i):
        self.i = i

    def __del__(self):
        transaction.add(follow, self.i)


def follow(i):
    FOLLOWED.append(i)


def drop(i):
    x = 0
    for j in range(300):
        x += j
    del POOL[i]


for i in range(1000):
    POOL[i] = Journaled(i)
for i in range(1000):
    transaction.add(drop, i)
transaction.run()
journaled = sorted(DONE)

for i in range(50):
    POOL[i] = Queuing(i)
for i in range(50):
    transaction.add(drop, i)
transaction.run()
followed = sorted(FOLLOWED)

FOLLOWED.clear()
own_queue = transaction.TransactionQueue()
for i in range(50):
    POOL[i] = Queuing(i)
for i in range(50):
    own_queue.add(drop, i)
own_queue.run()
on_own_queue = sorted(FOLLOWED)
transaction.run()             # the default queue: nothing left for it
print(len(journaled), len(followed), len(on_own_queue), len(FOLLOWED))
print("OK" if journaled == list(range(1000)) and followed == list(range(50))
      and on_own_queue == list(range(50)) and len(FOLLOWED) == 50 else "BAD")
