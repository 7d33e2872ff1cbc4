"""A shared WeakValueDictionary and WeakKeyDictionary merged with |= in sections
(values/keys kept alive in a list). Serial invariant: both hold N entries.
Red-team round 18: BAD 2/2 on 2 threads (fixed as userlist_iadd).
Attacks: barriers.augmented running WeakValueDictionary.__ior__ in place
in an optimistic section.
"""
import sys, weakref
import transaction


class Item:
    def __init__(self, i):
        self.i = i


ITEMS = [Item(i) for i in range(40)]
WVD = weakref.WeakValueDictionary()
WKD = weakref.WeakKeyDictionary()
N = 40


def step(i):
    global WVD, WKD
    WVD |= {i: ITEMS[i]}
    WKD |= {ITEMS[i]: len(WKD)}


def main():
    for i in range(N):
        transaction.add(step, i)
    transaction.run()
    vals = sorted(WKD.values())
    if len(WVD) != N or vals != list(range(N)):
        print("BAD", len(WVD), vals); sys.exit(1)
    print("OK", len(WVD), len(WKD))


main()
