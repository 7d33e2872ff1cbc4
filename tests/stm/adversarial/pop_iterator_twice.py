"""A cooperative round-robin scheduler: TASKS is a shared list of generator tasks;
each queued tick pops the first task, advances it one step, and puts it back at the
end unless it finished (FORM=list; FORM=deque: a collections.deque and popleft()). Also a pool of iterators handed out with ITERS.pop() and a set
of pending generators drained with S.pop().
Serial invariant: every task runs all of its steps: STEPS["n"] == 20 tasks * 5 steps,
DONE has 20 entries, each task id once; each pop() takes exactly one item.
Attacks: list.pop() of a shared list is a 'mutates 0' call run by calls.call_reading
on the section's copy; its result (a generator) is 'lazy' (calls._is_lazy), so
call_reading calls the bound pop AGAIN 'on copies' -- popping a second task.
"""
import collections
import os
import sys
import transaction

FORM = os.environ.get("FORM", "list")
STEPS = {"n": 0}
DONE = []


def task(k):
    for step in range(5):
        STEPS["n"] += 1
        yield step
    DONE.append(k)


TASKS = [task(k) for k in range(20)]
SET = set(task(k) for k in range(20, 40))
QUEUE = collections.deque(task(k) for k in range(40, 60))


def tick(i):
    if FORM == "list":
        if not TASKS:
            return
        t = TASKS.pop(0)
        try:
            next(t)
            TASKS.append(t)
        except StopIteration:
            pass
    elif FORM == "deque":
        if not QUEUE:
            return
        t = QUEUE.popleft()
        try:
            next(t)
            QUEUE.append(t)
        except StopIteration:
            pass
    else:
        if not SET:
            return
        t = SET.pop()
        try:
            next(t)
            SET.add(t)
        except StopIteration:
            pass


def main():
    for i in range(200):
        transaction.add(tick, i)
    transaction.run()
    left = {"list": TASKS, "set": SET, "deque": QUEUE}[FORM]
    left = len(left)
    ok = STEPS["n"] == 100 and len(DONE) == 20 and len(set(DONE)) == 20 and left == 0
    print("OK" if ok else "BAD", FORM, STEPS, len(DONE), "left", left)
    return 0 if ok else 1


sys.exit(main())
