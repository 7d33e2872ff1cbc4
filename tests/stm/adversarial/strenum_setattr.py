"""Account fields named by a ``StrEnum``, read and written with getattr/setattr.

Serial invariant: each call moves 1 from one account's field to the other's
(``getattr(acct, Field.BAL)`` / ``setattr(acct, Field.BAL, ...)``), so the
balances always total ``TOTAL``; another kind of call adds 1 to ``hits``
of an account through ``getattr``/``setattr`` and counts it in ``calls``.

Attacks: the ``getattr``/``setattr`` special handlers test
``type(name) is not str`` and call the builtin directly for anything else:
a ``StrEnum`` member is a ``str`` subclass, so the read goes past the read
log and the write lands in place in an optimistic section, unlogged and
unversioned.
"""
import enum
import transaction


class Field(enum.StrEnum):
    BAL = "bal"
    HITS = "hits"


class Acct:
    def __init__(self, bal):
        self.bal = bal
        self.hits = 0


ACCTS = [Acct(100) for _ in range(4)]
TOTAL = 400
K = 600


def transfer(i):
    a = ACCTS[i % 4]
    b = ACCTS[(i + 1) % 4]
    x = getattr(a, Field.BAL)
    y = getattr(b, Field.BAL)
    setattr(a, Field.BAL, x - 1)
    setattr(b, Field.BAL, y + 1)
    h = getattr(a, Field.HITS)
    setattr(a, Field.HITS, h + 1)


def main():
    for i in range(K):
        transaction.add(transfer, i)
    transaction.run()
    total = sum(a.bal for a in ACCTS)
    hits = sum(a.hits for a in ACCTS)
    if total != TOTAL or hits != K:
        print("BAD total", total, "of", TOTAL, "hits", hits, "of", K)
    else:
        print("OK", total, hits)


main()
