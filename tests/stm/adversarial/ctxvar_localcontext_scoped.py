"""A call computes at low precision inside `with decimal.localcontext() as c: c.prec = 3` and,
inside the block, also sets a context variable (a request id). After the block Python restores
the decimal context. Serial invariant: every reader computes 1/7 at the default precision 28,
and after run() decimal.getcontext().prec == 28.
Attacks: run_context.take_changes handed the whole current context to the run: the decimal
context a localcontext() block had set in C became every call's and the script's; only what a
context call itself changed is handed on now, and a worker brought up to date keeps what the
running call set in plain code.
"""
import contextvars
import decimal
import transaction

RID = contextvars.ContextVar("RID", default=None)
SEEN = []
LOW = []


def low_precision(i):
    with decimal.localcontext() as c:
        c.prec = 3
        RID.set(i)
        LOW.append(str(decimal.Decimal(1) / decimal.Decimal(7)))


def reader(i):
    x = 0
    for j in range(2000):
        x += j
    SEEN.append(str(decimal.Decimal(1) / decimal.Decimal(7)))


def main():
    N = 150
    for i in range(N):
        transaction.add(low_precision, i)
        transaction.add(reader, i)
    transaction.run()
    full = str(decimal.Decimal(1) / decimal.Decimal(7))
    wrong = [s for s in SEEN if len(s) < 20]
    prec = decimal.getcontext().prec
    print("readers at low precision", len(wrong), wrong[:2], "after run prec", prec, "low ok", set(LOW))
    print("OK" if not wrong and prec == 28 and set(LOW) == {"0.143"} else "BAD")


main()
