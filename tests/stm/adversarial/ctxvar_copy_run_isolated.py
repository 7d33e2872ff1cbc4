"""copy_context().run(fn) isolates fn's ContextVar.set from the caller's context: in a serial
run, a var set inside ctx.run is NOT seen by later calls, nor by the script after run().
Half the calls run an 'isolated' job (ctx.run(job) where job sets V); the other half read V.
Serial invariant: every reader sees the default 0, and V.get() after run() is 0.
Attacks: a variable set inside copy_context().run(job) was handed to the run as if set in the
worker's own context; a copy now has a home marker of its own, and only calls in the worker's
own context change the run's.
"""
import contextvars
import transaction

V = contextvars.ContextVar("V", default=0)
SEEN = []
INNER = []


def job(i):
    V.set(i + 1)
    INNER.append(V.get() == i + 1)


def isolated(i):
    ctx = contextvars.copy_context()
    ctx.run(job, i)


def reader(i):
    x = 0
    for j in range(2000):
        x += j
    SEEN.append(V.get())


N = 200
for i in range(N):
    transaction.add(isolated, i)
    transaction.add(reader, i)
transaction.run()
after = V.get()
nonzero = [s for s in SEEN if s != 0]
ok = not nonzero and after == 0 and all(INNER) and len(INNER) == N
print("readers seeing a leaked value:", len(nonzero), nonzero[:5], "after run:", after, "inner ok:", all(INNER))
print("OK" if ok else "BAD")
