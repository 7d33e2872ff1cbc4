"""A call runs asyncio.run(coro); the coroutine sets V (and a child task sets W). In a serial run
asyncio.run runs the coroutine in a COPY of the caller's context (Runner._context =
copy_context(), made by asyncio's own code), and a task runs in a copy too: neither V nor W is
changed for the caller, later calls, or the script after run().
Serial invariant: every reader sees V == 0 and W == 0, and after run() both are 0.
Attacks: asyncio.run and tasks copy the context in C, so their copies carried the worker's home
marker and their sets were handed to the run; a running loop now means another context, and only
what a call changed in its worker's own context, start against end, is handed on.
"""
import asyncio
import contextvars
import os
import transaction

V = contextvars.ContextVar("V", default=0)
W = contextvars.ContextVar("W", default=0)
SEEN = []
INNER = []
FORM = os.environ.get("FORM", "run")


async def child(i):
    W.set(1000 + i)


async def coro(i):
    V.set(i + 1)
    await asyncio.create_task(child(i))
    INNER.append((V.get(), W.get()))


def via_asyncio(i):
    if FORM == "run":
        asyncio.run(coro(i))
    else:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(coro(i))
        finally:
            loop.close()


def reader(i):
    x = 0
    for j in range(2000):
        x += j
    SEEN.append((V.get(), W.get()))


N = 100
for i in range(N):
    transaction.add(via_asyncio, i)
    transaction.add(reader, i)
transaction.run()
after = (V.get(), W.get())
bad = [s for s in SEEN if s != (0, 0)]
print("readers seeing a leaked value:", len(bad), bad[:5], "after run:", after, "inner", INNER[:2])
print("OK" if not bad and after == (0, 0) and len(SEEN) == N else "BAD")
