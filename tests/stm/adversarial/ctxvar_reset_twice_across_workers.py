"""Per-key scopes: call set_k does TOK[k] = W.set(k + 1) and queues two closers; both closers
reset the same token (a double release). Many keys, so the two closers run on different workers
and in both orders relative to the worker that made the token.
Serial invariant: for each k, exactly one closer's reset succeeds and the other raises
RuntimeError ("has already been used once").
Attacks: a token reset (emulated) on another worker was reset again natively by the worker whose
context made it: the used-token record is now consulted before Python's own reset, and a native
reset records the token as used too.
"""
import contextvars
import transaction

W = contextvars.ContextVar("W", default=0)
TOK = {}
RES = {}


def closer(k):
    t = TOK[k]
    try:
        W.reset(t)
        r = "reset"
    except RuntimeError:
        r = "RuntimeError"
    except ValueError:
        r = "ValueError"
    RES.setdefault(k, []).append(r)


def setter(k):
    TOK[k] = W.set(k + 1)
    transaction.add(closer, k)
    transaction.add(closer, k)


N = 200
for k in range(N):
    transaction.add(setter, k)
transaction.run()
bad = {k: v for k, v in RES.items() if sorted(v) != ["RuntimeError", "reset"]}
from collections import Counter
print(Counter(tuple(sorted(v)) for v in RES.values()), list(bad.items())[:4])
print("BAD" if bad or len(RES) != N else "OK")
