"""Shared lists stored by reference after the same section wrote them.

Serial invariant: each writer appends to a batch, then keeps the batch
itself in a "recently touched" index and in an ``Owner`` object, and
appends through the owner: every reference in the index and in the owners
IS one of the live batches, the section sees its own append through the
owner, and the batches end with 2000 items.

Attacks: calls handed the section's private copy of a container it wrote
(so that C code reads the section's writes). ``list.append``, an
application class's ``__init__`` and exceptions kept the copy, so the
appends made through those references later were lost (1006 of 2000).
"""
import transaction

bad = []
batches = [[] for _ in range(4)]
touched = []          # references to batches, in touch order


class Owner:
    def __init__(self, items):
        self.items = items


owners = []
count = [0]


def w(i):
    b = batches[i % 4]
    b.append(i)                      # write the batch first
    touched.append(b)                # then remember the batch itself
    o = Owner(b)
    o.items.append(-i)               # through the owner: same list
    owners.append(o)
    count[0] += 2
    if len(touched) > 8:
        del touched[0]
    if len(owners) > 8:
        del owners[0]
    if b[-1] != -i:
        bad.append(("own-owner", b[-2:]))


def r(i):
    for t in touched:
        if not any(t is b for b in batches):
            bad.append("index holds a copy")
            break
    for o in owners:
        if not any(o.items is b for b in batches):
            bad.append("owner holds a copy")
            break
    if sum(len(b) for b in batches) != count[0]:
        bad.append(("count", sum(len(b) for b in batches), count[0]))


for i in range(1500):
    transaction.add(w if i % 3 else r, i)
transaction.run()
if sum(len(b) for b in batches) != 2000:
    bad.append(("final", sum(len(b) for b in batches)))
print("BAD %r" % (bad[:4] + [b for b in bad if b[0] == "final"]) if bad else "OK")
