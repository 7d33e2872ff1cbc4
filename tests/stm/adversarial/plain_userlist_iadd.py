"""A plain thread (started at top level) grows a shared UserList with +=
while sections append to its .data. Each operation is atomic in plain Python
(list.extend / list.append). Serial invariant: nothing lost: 20000 + N items.
Red-team round 18: BAD 2/4 on 2 threads: plain code's UL += ... now runs
under W with what it reaches held.
Attacks: barriers.augmented in plain code running a library class's
__iadd__ in place, without W and without versions.
"""
import sys, threading
from collections import UserList
import transaction

UL = UserList()
N = 300


def plain():
    global UL
    for x in range(20000):
        UL += [("p", x)]


def step(i):
    UL.data.append(("s", i))


T = threading.Thread(target=plain)
T.start()


def main():
    for i in range(N):
        transaction.add(step, i)
    transaction.run()
    T.join()
    if len(UL) != 20000 + N:
        print("BAD", len(UL), sum(1 for t in UL if t[0] == "p"), sum(1 for t in UL if t[0] == "s")); sys.exit(1)
    print("OK", len(UL))


main()
