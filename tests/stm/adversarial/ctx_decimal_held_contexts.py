"""Decimal contexts the program holds, used in the very calls that compute.

The script keeps ``CTX = decimal.getcontext()``, the one context of a serial
run. Calls set ``CTX.prec`` and divide, set ``getcontext().prec`` and read
``CTX.prec``, clear ``CTX``'s flags and divide, then read ``CTX.flags``. In
a second run one call keeps ``getcontext()`` in a global, a later call sets
its precision, and readers record whether they saw that call and how many
digits they compute with.
Serial invariant: within a call, what it sets in either handle is what its
arithmetic uses and what the other handle reads; flags its division raised
are seen through CTX; after each run CTX has what the last calls left; a
reader that saw the setter computes at its precision, one that did not at
the old.
Attacks: the script's context mirrored the run's only at commits (a call
computed at the previous precision, read stale flags, and its own flags were
wiped at commit by the script context's state); a context kept by one call
was a worker's private copy (another call's change reached nobody).
"""
import decimal

import transaction

CTX = decimal.getcontext()
WRONG = []
FLAG = [False]
SEEN = []
KEPT = {}


def spin():
    x = 0
    for j in range(300):
        x += j


def set_held_then_divide(i):
    CTX.prec = 6 + i % 3
    digits = len(str(decimal.Decimal(1) / decimal.Decimal(7))) - 2
    if digits != CTX.prec:
        WRONG.append(("held prec", CTX.prec, digits))


def set_current_then_read_held(i):
    decimal.getcontext().prec = 6 + i % 3
    if CTX.prec != 6 + i % 3:
        WRONG.append(("current prec", 6 + i % 3, CTX.prec))


def clear_then_divide(i):
    CTX.clear_flags()
    spin()
    str(decimal.Decimal(1) / decimal.Decimal(3))
    if not CTX.flags[decimal.Inexact]:
        WRONG.append(("flags", i))


CALLS = [set_held_then_divide, set_current_then_read_held, clear_then_divide]
for i in range(60):
    transaction.add(CALLS[i % 3], i)
transaction.run()
CTX.prec = 28


def keep(i):
    KEPT["ctx"] = decimal.getcontext()


def set_kept(i):
    spin()
    KEPT["ctx"].prec = 5
    FLAG[0] = True


def read(i):
    spin()
    seen = FLAG[0]
    SEEN.append((seen, len(str(decimal.Decimal(1) / decimal.Decimal(7)))))


transaction.add(keep, 0)
transaction.run()
for i in range(150):
    transaction.add(set_kept if i == 50 else read, i)
transaction.run()
WRONG += [seen for seen in SEEN if seen != ((True, 7) if seen[0] else (False, 30))]
if decimal.getcontext().prec != 5 or CTX.prec != 5:
    WRONG.append(("after run", decimal.getcontext().prec, CTX.prec))
print(len(WRONG), WRONG[:3])
print("BAD" if WRONG else "OK")
