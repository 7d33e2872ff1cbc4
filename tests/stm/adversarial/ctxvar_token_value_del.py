"""A call sets a context variable to new objects again and again, dropping the
tokens; each object's ``__del__`` sets another context variable.

The engine keeps the tokens a run's calls make while the program holds them,
and lets go of the dropped ones in batches.
Serial invariant: every replaced object dies and its ``__del__`` runs once;
the run ends.
Attacks: tokens let go of under the engine's token lock: the value a token
held died there, and its ``__del__``'s ``set`` waited for that lock on its
own thread (run() hung for ever).
"""
import contextvars
import gc

import transaction

CALLS = 2
SETS = 70
VALUE = contextvars.ContextVar("VALUE", default=None)
LAST_DELETED = contextvars.ContextVar("LAST_DELETED", default=0)
DELETED = []


class Value:
    def __init__(self, k):
        self.k = k

    def __del__(self):
        LAST_DELETED.set(self.k)
        DELETED.append(self.k)


def call(i):
    for k in range(SETS):
        VALUE.set(Value(k))


for i in range(CALLS):
    transaction.add(call, i)
transaction.run()
VALUE.set(None)
gc.collect()
print(len(DELETED), CALLS * SETS)
print("OK" if len(DELETED) >= CALLS * (SETS - 1) else "BAD")
