"""A list made by a display in a section, published, then filled after the section turned inevitable.

Serial invariant: writers publish a new pair [0, 0] and then set both items
to i, so a reader sees a pair with equal items, never [0, 0] (the writer has
finished before any reader runs after it).

Attacks: the rewriter fills a list a section made (a display in a local)
without barriers, as nobody else can reach it before the section ends. A
section that turned inevitable after storing it published it then and
unlocked the stripes: readers saw (i, 0) and (0, 0) pairs (fifth round,
10 runs of 10). The stripes published at the turn now stay locked until the
section ends.
"""
import os
import transaction

shared = {"cur": [1, 1]}
bad = []


def spin(n):
    x = 0
    for k in range(n):
        x += k
    return x


def writer(i):
    b = [0, 0]
    shared["cur"] = b
    os.getpid()          # unknown call: the section becomes inevitable here
    b[0] = i
    spin(300)
    b[1] = i


def reader(i):
    c = shared["cur"]
    x = c[0]
    spin(300)
    y = c[1]
    if x != y or x == 0:
        bad.append((x, y))


def main():
    for i in range(1, 1500):
        transaction.add(writer if i % 3 == 0 else reader, i)
    transaction.run()
    print("BAD %r" % bad[:5] if bad else "OK")


main()
