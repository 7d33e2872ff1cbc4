"""Reports format a shared pair with ``str.format`` while transfers move value in it.

Serial invariant: transfers keep ``acct.a + acct.b == 1000``, so the two
numbers of every report add up to 1000.

Attacks: ``str.format`` reading the attributes its format string names
(``{0.a}``), concurrently: the format method is C code that reads
``acct.a`` and ``acct.b`` past the barriers, so unless the engine records
the attributes of the instances it is given as read, a report can see a
transfer's commit half published and still commit. The long filler field
between ``{0.a}`` and ``{0.b}`` widens the window between the two reads.
"""

import transaction

K = 1500
FILLER = "x" * 100_000


class Pair:
    def __init__(self):
        self.a = 1000
        self.b = 0


acct = Pair()
reports = []


def transfer(i):
    if i % 2:
        acct.a -= 1
        acct.b += 1
    else:
        acct.b -= 1
        acct.a += 1


def report(i):
    text = "{0.a} {1} {0.b}".format(acct, FILLER)
    first, _, last = text.split()
    reports.append((int(first), int(last)))


def main():
    for i in range(K):
        transaction.add(transfer, i)
        if i % 5 == 0:
            transaction.add(report, i)
    transaction.run()
    bad = [pair for pair in reports if sum(pair) != 1000]
    if acct.a + acct.b != 1000:
        bad.append(("final", acct.a, acct.b))
    print("BAD" if bad else "OK", len(bad), bad[:4])


main()
