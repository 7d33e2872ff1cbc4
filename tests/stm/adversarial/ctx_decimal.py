"""``decimal`` precision and a context variable set by the script before ``run()``.

Serial invariant: the script sets ``decimal.getcontext().prec = 6`` and a
``ContextVar`` before ``run()``; every call, run in the script's context
in a serial run, divides with 6 significant digits and reads the
variable's value. Halfway, a call raises the precision to 9 for the calls
after it: every result has 6 or 9 digits, all 6-digit results come before
(in the serial order, that is in the order of a shared counter) the
9-digit ones.

Attacks: each worker thread had a context of its own: a fresh decimal
context (28 digits) and the variable unset, whatever the script set.
"""

import contextvars
import decimal

import transaction

K = 200
SCALE = contextvars.ContextVar("SCALE")
ticket = [0]
results = []


def work(i):
    turn = ticket[0]
    ticket[0] = turn + 1
    if i == K // 2:
        decimal.getcontext().prec = 9
    digits = len(str(decimal.Decimal(1) / decimal.Decimal(7))) - 2
    results.append((turn, digits, SCALE.get(None)))


def main():
    decimal.getcontext().prec = 6
    SCALE.set(10)
    for i in range(K):
        transaction.add(work, i)
    transaction.run()
    bad = []
    if sorted(t for t, _, _ in results) != list(range(K)):
        bad.append(("turns", len(results)))
    kinds = [d for _, d, _ in sorted(results)]
    if any(d not in (6, 9) for d in kinds) or kinds != sorted(kinds):
        bad.append(("digits", sorted(set(kinds)), "ordered", kinds == sorted(kinds)))
    if {s for _, _, s in results} != {10}:
        bad.append(("SCALE seen", sorted({str(s) for _, _, s in results})))
    print("BAD" if bad else "OK", bad)


main()
