"""A counter kept in a module, read back with ``from __main__ import n`` in a
function (seventh round).

Serial invariant: every call adds one, so n ends at K; a call reads back its
own write.

Attacks: ``from module import name`` in a function, which reads the module's
attribute plainly: no read-log entry (concurrent increments were lost) and
not the section's own ``module.name = v``. The name is now read again
through the attribute barrier.
"""
import sys

import transaction

K = 1200
n = 0
me = sys.modules[__name__]
bad = []


def spin():
    x = 0
    for j in range(200):
        x += j
    return x


def bump(i):
    from __main__ import n
    spin()
    me.n = n + 1


def bump_own(i):
    me.n = me.n + 1
    from __main__ import n
    if n != me.n:
        bad.append(("own", n, me.n))


def main():
    for i in range(K):
        transaction.add(bump if i % 2 else bump_own, i)
    transaction.run()
    if me.n != K:
        bad.append(("final", me.n, K))
    print("BAD %r" % bad[:4] if bad else "OK")


main()
