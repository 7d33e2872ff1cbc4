"""A class statement inside each call: its body reads the shared counters the call then bumps.

Serial invariant: each of ``K`` calls reads ``state["n"]`` and ``cells[0]``
in a class body and stores them plus one, so both end at ``K``.

Attacks: class statements inside a section, concurrently. A class body runs
as a frame of its own, and the rewriter once left it alone (a module's
class bodies run once, at import): the body's reads then went past the
barriers, were not validated at commit, and two calls could both read the
same count, losing an update. The spin between the reads and the writes
widens the window.
"""

import transaction

K = 300
state = {"n": 0}
cells = [0]


def spin():
    x = 0
    for j in range(100):
        x += j
    return x


def job(i):
    class Snap:
        n = state["n"]
        m = cells[0]

    spin()
    state["n"] = Snap.n + 1
    cells[0] = Snap.m + 1


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    bad = []
    if state["n"] != K or cells[0] != K:
        bad.append(("lost updates", state["n"], cells[0]))
    print("BAD" if bad else "OK", len(bad), bad)


main()
