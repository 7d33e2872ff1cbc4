"""An instance's ``__dict__`` reached through ``object.__getattribute__`` and
``operator.attrgetter``, then a counter in it bumped.

Serial invariant: every call adds one to one of the counters (read through
``o.n`` elsewhere), so they sum to K.

Attacks: both calls are irrevocable, so the section runs inevitably and
changes the live dict in place; the dict's stripes got new versions, but not
``o.n``'s, so optimistic sections adding through ``o.n`` committed over the
change (1009 of 1200 on 4 threads; fifth round). The call now holds
RESHAPE_STRIPE, as ``obj.__dict__`` does.
"""
import operator
import transaction

K = 1200
DICT = "__" + "dict" + "__"


class O:
    def __init__(self):
        self.n = 0


objs = [O() for _ in range(3)]
get_dict = operator.attrgetter(DICT)


def job(i):
    o = objs[i % 3]
    if i % 4 == 1:
        object.__getattribute__(o, DICT)["n"] += 1
    elif i % 4 == 3:
        get_dict(o)["n"] += 1
    else:
        v = o.n
        for _ in range(30):
            pass
        o.n = v + 1


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    tot = sum(o.n for o in objs)
    print("OK" if tot == K else "BAD total %d want %d" % (tot, K))


main()
