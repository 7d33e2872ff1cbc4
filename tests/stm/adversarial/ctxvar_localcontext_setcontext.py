"""A call enters decimal.localcontext() and, inside the block, calls decimal.setcontext(C3)
(a context of precision 3). Leaving the block restores the context saved at its entry, so in a
serial run no call after it (nor the script after run()) sees precision 3.
Serial invariant: every reader sees getcontext().prec == 28 and 1/7 with 28 digits.
Attacks: decimal.setcontext inside a localcontext() block was handed on, and the block's exit
(in C) restored the outer context unseen: every worker and the script kept the block's
precision.
"""
import decimal
import transaction

SEEN = []


def scoped(i):
    with decimal.localcontext():
        decimal.setcontext(decimal.Context(prec=3))
        x = decimal.Decimal(1) / decimal.Decimal(7)
        assert len(str(x)) == 5, x


def reader(i):
    x = 0
    for j in range(2000):
        x += j
    p = decimal.getcontext().prec
    q = str(decimal.Decimal(1) / decimal.Decimal(7))
    SEEN.append((p, len(q)))


N = 150
for i in range(N):
    transaction.add(scoped, i)
    transaction.add(reader, i)
transaction.run()
after = decimal.getcontext().prec
bad = [s for s in SEEN if s != (28, 30)]
print("readers seeing a leaked precision:", len(bad), bad[:5], "after run prec:", after)
print("OK" if not bad and after == 28 and len(SEEN) == N else "BAD")
