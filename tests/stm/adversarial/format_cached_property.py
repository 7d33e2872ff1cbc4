"""A ``functools.cached_property`` read by ``str.format`` (``"{0.total}"``) while writers invalidate it.

Serial invariant: a writer changes ``a`` and ``b`` and drops the cache
with ``del s.total`` in the same call, so every report formats a total
equal to ``a + b`` as the same call reads them, and at the end
``s.total == s.a + s.b``.

Attacks: as ``format_classattr``, with a ``cached_property``: ``str.format``
ran it from C, storing its value in place.
"""
import functools
import transaction

K = 3000
bad = []


class Sheet:
    def __init__(self):
        self.a = 0
        self.b = 0

    @functools.cached_property
    def total(self):
        return self.a + self.b


S = Sheet()


def step(i):
    if i % 3 == 0:
        S.a += 1
        S.b += 2
        try:
            del S.total
        except AttributeError:
            pass
    else:
        text = "{0.total}|{0.a}|{0.b}".format(S)
        t, a, b = map(int, text.split("|"))
        if t != a + b:
            bad.append((i, t, a, b))


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if S.total != S.a + S.b:
        bad.append(("final", S.total, S.a, S.b))
    print("BAD" if bad else "OK", len(bad), bad[:3], bad[-1:])


main()
