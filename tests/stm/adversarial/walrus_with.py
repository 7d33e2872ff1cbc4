"""Globals bound by walrus, attributes bound by ``with ... as``, nonlocals bound by walrus.

Serial invariant: 300 calls each add 1 to a global through ``(g := g + 1)``
and to an attribute through a context manager whose ``__enter__`` returns
the attribute plus one, bound by ``with ... as holder.a``; five more calls
count to 10 in a closure with ``(n := n + 1)``. So 300, 300 and five 10s.

Attacks: binding forms other than ``=``. The engine once left them to
Python: the global and the attribute were written in place (applied again
by every retry: 317 and 310), and the walrus replaced the nonlocal's cell
object, so the next read raised AttributeError.
"""

import transaction

g = 0


class Holder:
    pass


holder = Holder()
holder.a = 0


class Entering:
    def __enter__(self):
        return holder.a + 1

    def __exit__(self, *exc):
        return False


def job(i):
    global g
    if (g := g + 1) < 0:
        print("never")
    with Entering() as holder.a:
        pass


def outer():
    n = 0

    def inc():
        nonlocal n
        if (n := n + 1):
            pass

    for _ in range(10):
        inc()
    return n


counted = []


def count(i):
    counted.append(outer())


def main():
    bad = []
    for i in range(300):
        transaction.add(job, i)
    for i in range(5):
        transaction.add(count, i)
    try:
        transaction.run()
    except Exception as exc:
        bad.append(("raised", repr(exc)))
    if (g, holder.a, counted) != (300, 300, [10] * 5):
        bad.append(("counted", g, holder.a, counted))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
