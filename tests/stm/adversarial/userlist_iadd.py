"""A shared collections.UserList grown with += in sections.
Serial invariant: UL holds 0..N-1 once each.
Red-team round 18: BAD 2/2 on 2 threads. A += on a shared instance of a
class whose in-place operators are library Python is inevitable and runs
with what it reaches held (barriers._changes_in_library_code).
Attacks: barriers.augmented running UserList.__iadd__ in place in an
optimistic section (every aborted attempt's append stayed).
"""
import sys
from collections import UserList
import transaction

UL = UserList()
N = 40


def step(i):
    global UL
    UL += [i]


def main():
    for i in range(N):
        transaction.add(step, i)
    transaction.run()
    if sorted(UL) != list(range(N)):
        print("BAD", len(UL), sorted(UL)); sys.exit(1)
    print("OK", len(UL))


main()
