"""A shared collections.UserDict merged with |= in sections, counting.
Serial invariant: TOTAL == N and UD holds N keys.
Red-team round 18: BAD 2/2 on 2 threads (fixed as userlist_iadd).
Attacks: barriers.augmented running UserDict.__ior__ in place in an
optimistic section.
"""
import sys
from collections import UserDict
import transaction

UD = UserDict()
N = 40


def step(i):
    global UD
    UD |= {i: len(UD)}


def main():
    for i in range(N):
        transaction.add(step, i)
    transaction.run()
    vals = sorted(UD.values())
    if len(UD) != N or vals != list(range(N)):
        print("BAD", len(UD), vals); sys.exit(1)
    print("OK", len(UD))


main()
