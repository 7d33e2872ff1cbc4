"""An inevitable section gets a shared dict back from an application function
called through library Python (functools.singledispatch), stores a key, and
(call 50 only) retires the dict's OLD keys: their __hash__ raises from then
on (no serial run hashes them again: nothing looks them up).

Serial invariant (plain Python): no exception, no hang; every key 0..N-1 in D.

Attacks: what an application callback hands back to library code run in
place is held to the section's end, and the keys it gains are found when W
is let go (reach.hold_handed_back, _hold_changes). That hashed every key of
the dict, inside W's release: the retired keys' __hash__ raised there, the
section's end skipped giving W back, and every thread waited for ever
(red-team round 45). Keys are now compared by identity, a stripe that
cannot be told is RESHAPE_STRIPE, release_held survives a failing action,
and a section's end gives W back in a finally.
"""
import functools
import os

import transaction

N = 200


class Key:
    def __init__(self, v):
        self.v = v
        self.retired = False

    def __hash__(self):
        if self.retired:
            raise RuntimeError(f"retired key {self.v} hashed")
        return hash(self.v)

    def __eq__(self, other):
        return isinstance(other, Key) and other.v == self.v


OLD = [Key(-j - 1) for j in range(5)]
D = {k: 0 for k in OLD}


@functools.singledispatch
def table(x):
    return D


ERRORS = []


def work(i):
    with open(os.devnull, "w") as sink:
        sink.write("x")
    t = table(i)
    t[Key(i)] = i
    if i == 50:
        for k in OLD:
            k.retired = True


for i in range(N):
    transaction.add(work, i)
try:
    transaction.run()
except Exception as e:
    ERRORS.append(repr(e))
lost = [i for i in range(N) if D.get(Key(i)) != i]
print(f"BAD {len(lost)} lost, errors {ERRORS[:2]}" if lost or ERRORS else f"OK {N}")
