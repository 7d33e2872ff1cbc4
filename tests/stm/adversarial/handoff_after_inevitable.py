"""A call queues a follow-up, turns inevitable (print), then goes on writing.

``producer(i)`` makes a list (a display in a local), queues
``consumer(i, mine)``, prints to stderr, appends to its list three times and
sets ``X[i] = 1``. The consumer appends "c" to the list and queues a report of
what it read of ``X[i]``.
Serial invariant: a queued call runs after the call that queued it: every
list ends as [i, i, i, "c"] and every consumer saw X[i] == 1.
Attacks: the queued call pushed when its caller turned inevitable, not when
it ended: it started on another worker while the caller still ran (a
read-only consumer committed before its producer; the consumer's append,
on a list the rewriter lets the producer fill without barriers, wiped out
the producer's later appends).
"""
import sys

import transaction

N = 100
X = {}
ALL = []
WRONG = []
REPORTS = [0]


def spin(n=300):
    x = 0
    for j in range(n):
        x += j
    return x


def report(i, seen):
    REPORTS[0] += 1
    if seen != 1:
        WRONG.append((i, seen))


def consumer(i, mine):
    mine.append("c")
    transaction.add(report, i, X.get(i))


def producer(i):
    mine = []
    ALL.append(mine)
    transaction.add(consumer, i, mine)
    print("producer", i, file=sys.stderr)
    mine.append(i)
    spin()
    mine.append(i)
    spin()
    mine.append(i)
    X[i] = 1
    if i < N - 1:
        transaction.add(producer, i + 1)


def main():
    transaction.add(producer, 0)
    transaction.run()
    torn = [mine for i, mine in enumerate(ALL) if mine != [i, i, i, "c"]]
    print(len(ALL), REPORTS, torn[:3], WRONG[:3])
    print("OK" if len(ALL) == N and not torn and not WRONG and REPORTS[0] == N else "BAD")


main()
