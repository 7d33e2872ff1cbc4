"""A call makes a token in a context that is not the run's: thread (a threading.Thread the
call starts and joins: a new thread has an empty context), asyncio (inside asyncio.run, whose
coroutine runs in a copy of the context), task (a task made by asyncio.create_task inside it);
one run() per form.
The token goes to shared state; a later call resets it in its own context.
Serial invariant: Python refuses each reset with ValueError ("created in a different Context"),
and V stays at its default 0 for the readers and after run().
(Each resetter is queued by its maker, so it runs after it in every serial order.)
Attacks: tokens made outside the worker's own context (a thread the call started, asyncio.run, a
task) were registered and then reset as the run's where Python refuses them.
"""
import asyncio
import contextvars
import threading
import transaction

V = contextvars.ContextVar("V", default=0)
TOK = {}
OUT = []
SEEN = []


def in_thread(k):
    TOK[k] = V.set(k + 1)


async def coro(k):
    TOK[k] = V.set(k + 1)


async def outer(k):
    await asyncio.create_task(coro(k))


def maker(k):
    if FORM == "thread":
        t = threading.Thread(target=in_thread, args=(k,))
        t.start()
        t.join()
    elif FORM == "asyncio":
        asyncio.run(coro(k))
    else:
        asyncio.run(outer(k))
    transaction.add(resetter, k)
    transaction.add(reader, k)


def resetter(k):
    tok = TOK.get(k)
    if tok is None:
        OUT.append("none")
        return
    try:
        V.reset(tok)
        OUT.append("reset")
    except ValueError:
        OUT.append("ValueError")
    except RuntimeError:
        OUT.append("RuntimeError")


def reader(k):
    SEEN.append(V.get())


N = 100
verdicts = []
for FORM in ("thread", "asyncio", "task"):
    TOK.clear()
    OUT.clear()
    SEEN.clear()
    for k in range(N):
        transaction.add(maker, k)
    transaction.run()
    from collections import Counter
    c = Counter(OUT)
    bad_reads = [s for s in SEEN if s != 0]
    print(FORM, dict(c), "readers seeing nonzero", len(bad_reads), bad_reads[:4], "after", V.get())
    verdicts.append(c == Counter({"ValueError": N}) and not bad_reads and V.get() == 0)
print("OK" if all(verdicts) else "BAD")
