"""A call runs a job in a FRESH context: contextvars.Context().run(job); the job sets its own
variable J there. Other variables (A, set by the script before run(); B, set by an earlier
call) are untouched in a serial run: later calls and the script after run() see them.
Serial invariant: every reader sees A == "main-A" and B == "call-B"; after run(): same, and J
keeps its default (the fresh context is thrown away).
Attacks: inside contextvars.Context().run(job) every run variable was missing, and the hand-over
reset them all to their defaults for the whole run.
"""
import contextvars
import transaction

A = contextvars.ContextVar("A", default="dflt-A")
B = contextvars.ContextVar("B", default="dflt-B")
J = contextvars.ContextVar("J", default=0)
SEEN = []


def set_b():
    B.set("call-B")


def job(i):
    J.set(i + 1)


def isolated(i):
    contextvars.Context().run(job, i)


def reader(i):
    x = 0
    for j in range(2000):
        x += j
    SEEN.append((A.get(), B.get(), J.get()))


def main():
    A.set("main-A")
    transaction.add(set_b)
    transaction.run()
    N = 150
    for i in range(N):
        transaction.add(isolated, i)
        transaction.add(reader, i)
    transaction.run()
    wrong = [s for s in SEEN if s != ("main-A", "call-B", 0)]
    after = (A.get(), B.get(), J.get())
    print("wrong reads", len(wrong), wrong[:3], "after run", after)
    print("OK" if not wrong and after == ("main-A", "call-B", 0) else "BAD")


main()
