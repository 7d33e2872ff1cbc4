"""A call sets V many times (dropping the tokens), then makes a token in a copied context,
T = ctx.run(V.set, 99), and tries V.reset(T) in its own context -- which Python refuses
(ValueError: created in a different Context), in any serial run.
Serial invariant: every such reset raises ValueError and V keeps the call's last value.
Attacks: tokens were remembered by id only: a token made in a copied context took the address of
a dropped one and was reset as the run's; tokens are now held while the application holds them,
and only those made in the worker's own context are.
"""
import contextvars
import transaction

V = contextvars.ContextVar("V", default=0)
OUT = []


def call(i):
    for k in range(50):
        V.set(k)
    ctx = contextvars.copy_context()
    t = ctx.run(V.set, 99)
    try:
        V.reset(t)
        OUT.append(("reset", V.get()))
    except ValueError:
        OUT.append(("ValueError", V.get()))


for i in range(200):
    transaction.add(call, i)
transaction.run()
from collections import Counter
c = Counter(OUT)
print(c)
print("OK" if c == Counter({("ValueError", 49): 200}) else "BAD")
