"""A call that queues many follow-ups commits just before another call raises.

``fan`` prints (inevitable), works, then queues 500 follow-ups; ``boom``
works a little and raises. The script catches the error and runs the queue
again, with nothing new added.
Serial invariant: after a call raised, run() drops what is still queued:
the second run() runs no follow-up (the first may run some, those ordered
before the raising call).
Attacks: follow-ups pushed as ``fan``'s section ended, after the raising
call's worker had emptied the queue: they stayed in it, and the next run()
ran them.
"""
import sys

import transaction

RAN = []
PHASE = ["first"]


def follow(i):
    RAN.append((PHASE[0], i))


def fan(i):
    print("fan", file=sys.stderr)
    x = 0
    for j in range(20000):
        x += j
    for k in range(500):
        transaction.add(follow, k)


def boom(i):
    x = 0
    for j in range(2000):
        x += j
    raise KeyError(i)


for attempt in range(3):
    transaction.add(fan, 0)
    transaction.add(boom, 1)
    PHASE[0] = "first"
    try:
        transaction.run()
    except KeyError:
        pass
    PHASE[0] = "second"
    transaction.run()
late = [ran for ran in RAN if ran[0] == "second"]
print(len(RAN), len(late), late[:3])
print("BAD" if late else "OK")
