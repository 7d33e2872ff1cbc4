"""A section writes a shared UserList's .data (in place, or rebinding it), then
reads it with binary operators: UL + [], [] + UL, UL * 1, UserDict | {}.
Serial invariant: each result equals the section's own .data.
Red-team round 18: wrong on every run. An operator of a library class on a
shared instance records what it reads, and makes the section inevitable
when the section wrote it (barriers.operand).
Attacks: operators of a library class (UserList.__add__) reading the
instance's attributes past the barriers, missing the section's own writes.
"""
import sys
from collections import UserList, UserDict
import transaction

UL = UserList([0])
UD = UserDict({0: 0})
BAD = []


def step(i):
    if i % 2:
        UL.data.append(i)
        UD.data[i] = i
    else:
        UL.data = UL.data + [i]
        UD.data = {**UD.data, i: i}
    want = list(UL.data)
    got = [list(UL + []), list([] + UL), list(UL * 1), sorted(UD | {}) == sorted(UD.data)]
    if got[:3] != [want] * 3 or not got[3]:
        BAD.append((i, want, got))


def main():
    for i in range(1, 21):
        transaction.add(step, i)
    transaction.run()
    if BAD:
        print("BAD", len(BAD), BAD[:2]); sys.exit(1)
    print("OK", len(UL))


main()
