"""One attribute updated through ``vars(obj)[name]`` in some calls and ``obj.name`` in others.

Serial invariant: each call moves ``hits`` up and ``misses`` down by one,
so readers always see ``hits + misses == 0`` and the run ends at 2000 and
-2000.

Attacks: ``vars(obj)`` handed out the live ``__dict__``: its item writes
went to a dict log that ``obj.name`` reads did not consult (the section
missed its own write), and on 4 threads readers saw torn values.
"""
import transaction

class Counter:
    def __init__(self):
        self.hits = 0
        self.misses = 0

c = Counter()
bad = []

def via_vars(i):
    d = vars(c)
    d["hits"] = d["hits"] + 1
    d["misses"] = d["misses"] - 1

def via_attr(i):
    c.hits += 1
    c.misses -= 1

def check(i):
    if c.hits + c.misses != 0:
        bad.append(("attr", c.hits, c.misses))
    d = vars(c)
    if d["hits"] + d["misses"] != 0:
        bad.append(("vars", d["hits"], d["misses"]))

for i in range(3000):
    transaction.add([via_vars, via_attr, check][i % 3], i)
transaction.run()
if c.hits != 2000 or c.misses != -2000:
    bad.append(("final", c.hits, c.misses))
print("BAD %r" % bad[:4] if bad else "OK")
