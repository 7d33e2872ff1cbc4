"""A shared ``defaultdict`` keyed by an application class with its own
``__hash__`` and ``__eq__``: every call turns inevitable (it opens a file),
inserts its key (``D[Key(i)].append(i)``) and every 5th call reads ``len(D)``.

Serial invariant: no exception, no hang; every key 0..N-1 in D holding [i].

Attacks: C code handed a shared defaultdict in an inevitable section
(``len(D)``) has the engine watch the dict for keys its factory inserts
(txn.hold_lookups_in_place). The watch took a set of the live keys and, when
W was let go, iterated the live dict and hashed each new key: the
application's ``__hash__``/``__eq__`` ran inside W's release, another
section's key went in meanwhile ("dictionary changed size during
iteration", 5 runs of 5 on 2 threads), and the exception, raised from W's
release hook, left W held: every thread waited for ever (4 threads, red-team
round 44). The watch now copies the dict in C and compares keys by identity,
and W is released even when a release hook fails.
"""
import collections
import os

import transaction

N = 200


class Key:
    def __init__(self, v):
        self.v = v

    def __hash__(self):
        return hash(self.v)

    def __eq__(self, other):
        return isinstance(other, Key) and other.v == self.v


D = collections.defaultdict(list)
SIZES = []


def work(i):
    with open(os.devnull, "w") as sink:
        sink.write("x")
    D[Key(i)].append(i)
    if i % 5 == 0:
        SIZES.append(len(D))


for i in range(N):
    transaction.add(work, i)
transaction.run()
lost = [i for i in range(N) if D.get(Key(i)) != [i]]
print(f"BAD {len(lost)} lost" if lost else f"OK {N}")
