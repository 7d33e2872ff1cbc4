"""Calls append to ``EV[i]`` of a shared ``defaultdict(list)``: the lookup of
a missing key inserts it. Half the calls turn inevitable first (they open a
file), the others stay optimistic.

Serial invariant: every key 0..N-1 ends in EV, holding [i].

Attacks: an inevitable section (like a coroutine step, or plain code) reads
``EV[i]`` in place, and the defaultdict's ``__missing__`` inserted the key
past every barrier, without a new version for the dict: an optimistic
section holding a copy of EV made before passed validation, and its commit
removed every key its copy lacked (173-195 of 400 keys lost on 4 threads,
red-team round 43). The read of a missing key of a shared dict whose class
has a ``__missing__`` is now a write in place (barriers.get_item, and the C
barrier falls back to it for dict subclasses).
"""
import collections
import os

import transaction

N = 400
EV = collections.defaultdict(list)


def work(i):
    if i % 2:
        with open(os.devnull, "w") as sink:
            sink.write("x")
    EV[i].append(i)


def main():
    for i in range(N):
        transaction.add(work, i)
    transaction.run()
    missing = [i for i in range(N) if EV.get(i) != [i]]
    print(f"BAD {len(missing)} of {N} keys lost, e.g. {missing[:6]}" if missing else f"OK {N}")


main()
