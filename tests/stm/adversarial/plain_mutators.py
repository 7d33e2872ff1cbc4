"""Plain code handed a shared container, or one of its mutating methods, changes it.

Serial invariant: 400 calls each append one event in one of four ways (a
plain ``append``; ``list(map(EVENTS.append, ...))``, with a ``deque``
draining ``map(D.__setitem__, ...)``; ``functools.partial(EVENTS.append)``;
``operator.methodcaller("append", x)(EVENTS)``), so 400 events and 100 keys.

Attacks: mutations made by uninstrumented code. The bound method handed to
``map`` was re-bound to the section's read copy (the appends were dropped:
298 of 400); ``partial`` and ``methodcaller``, unknown to the policy table,
ran in place inevitably without new versions, so a concurrent section
published its older copy over them (395 of 400 over HTTP).
"""
import functools, operator, collections
import transaction
EVENTS = []
D = {}
def a(i):
    EVENTS.append(("a", i))
def b(i):
    list(map(EVENTS.append, [("m", i)]))
    collections.deque(map(D.__setitem__, [i], [i]), maxlen=0)
def c(i):
    functools.partial(EVENTS.append)(("p", i))
def d(i):
    operator.methodcaller("append", ("c", i))(EVENTS)
fs = [a, b, c, d]
for i in range(400):
    transaction.add(fs[i % len(fs)], i)
transaction.run()
print("OK" if len(EVENTS) == 400 and len(D) == 100 else "BAD %d %d" % (len(EVENTS), len(D)))
