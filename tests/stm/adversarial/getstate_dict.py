"""An instance's live ``__dict__`` reached through ``obj.__getstate__()`` (sixth round).

Serial invariant: the counters sum to the number of calls.

Attacks: since 3.11 ``object.__getstate__`` returns the instance dict itself;
a section bumped a counter in it in place while sections adding through
``o.n`` committed over it (982 of 1200). The call now holds RESHAPE_STRIPE.
"""
import transaction

K = 1200


class O:
    def __init__(self):
        self.n = 0


objs = [O() for _ in range(3)]
DESC = O.__dict__["__dict__"]


def job(i):
    o = objs[i % 3]
    k = i % 8
    if k % 2 == 1:
        o.__getstate__()["n"] += 1
    else:
        v = o.n
        for _ in range(200):
            pass
        o.n = v + 1


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    tot = sum(o.n for o in objs)
    print("OK" if tot == K else "BAD total %d want %d" % (tot, K))


main()
