"""A ``functools.cached_property`` invalidated with ``del obj.total`` (the usual
idiom), read by other calls (seventh round).

Serial invariant: readers always see ``s.total == s.a + s.b``: the writer
changes ``a`` and drops the cached total in the same call.

Attacks: a non-data descriptor that stores its answer in the instance. Asked
through ``hasattr`` it ran in place inside an optimistic section; run by an
inevitable reader, its store bumped no version, so a writer that saw no
cached value committed beside it and a stale total stayed. The read is now
a versioned write of ``obj.total``.
"""
import functools
import transaction

K = 1500


class Stats:
    def __init__(self):
        self.a = 0
        self.b = 0

    @functools.cached_property
    def total(self):
        return self.a + self.b


s = Stats()
bad = []


def spin():
    x = 0
    for j in range(200):
        x += j
    return x


def bump(i):
    s.a = s.a + 1
    try:
        del s.total
    except AttributeError:
        pass
    spin()
    s.b = s.b + 1


def check(i):
    t = s.total
    if t != s.a + s.b:
        bad.append((t, s.a, s.b))


def main():
    for i in range(K):
        transaction.add(bump if i % 2 else check, i)
    transaction.run()
    if s.a != K // 2 or s.b != K // 2:
        bad.append(("final", s.a, s.b))
    print("BAD %r" % bad[:4] if bad else "OK")


main()
