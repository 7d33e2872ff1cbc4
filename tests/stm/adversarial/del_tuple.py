"""``del (a, b)`` / ``del [a, b]``: deleting shared items and attributes through a tuple or list target.

Serial invariant: sessions are opened (``SESSIONS[k] = ...``, ``COUNT +=
1``) and closed in pairs with ``del (SESSIONS[a], SESSIONS[b])`` and
``COUNT -= 2`` only when both exist, so ``len(SESSIONS) == COUNT`` between
calls, no ``del`` raises, and a call that just set ``B.tmp`` can delete
it with ``del [B.tmp, B.tmp2]``.

Attacks: a ``del`` whose target is a tuple or list went past the rewriter
unbarriered: it deleted on the live objects, missing the call's own
buffered writes (AttributeError on every call, even on one thread),
and unlogged, not undone on abort: lost and doubled deletes on 4 threads
(KeyError, ``len`` != ``COUNT``).
"""
import transaction

K = 1200
N = 16
SESSIONS = {}
STATE = {"count": 0}


class Box:
    pass


B = Box()


def step(i):
    a = (i * 5) % N
    b = (a + 1) % N
    if i % 3:
        if a not in SESSIONS:
            SESSIONS[a] = i
            STATE["count"] += 1
    elif a in SESSIONS and b in SESSIONS:
        del (SESSIONS[a], SESSIONS[b])
        STATE["count"] -= 2
    if i % 50 == 0:
        B.tmp = i
        B.tmp2 = i
        del [B.tmp, B.tmp2]


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    ok = len(SESSIONS) == STATE["count"] and not hasattr(B, "tmp")
    print("OK" if ok else "BAD", len(SESSIONS), STATE["count"])


main()
