"""Audits count two shared lists through a list of lists while moves shift items between them.

Serial invariant: a move pops an item from one list and appends it to the
other, so ``len(a) + len(b) == N`` between calls, and an audit computing it
with ``len(sum(parts, []))`` or ``sum(map(len, parts))`` always gets ``N``.

Attacks: shared containers nested in a container the section made, given to
uninstrumented builtins, concurrently. ``parts`` is fresh (the section's
own), so it needs no barrier itself; the shared lists inside it are read by
``sum`` and ``len`` in C. Unless the engine looks inside the fresh argument
and records those lists as read, an audit can see a move's commit half
published (an item in both lists or in neither) and still commit. The empty
lists padding ``parts`` widen the window between reading ``a`` and ``b``.
"""

import transaction

N = 200
K = 600
PADDING = 300
a = list(range(N))
b = []
seen = []


def move(i):
    if i % 2 and a:
        b.append(a.pop())
    elif b:
        a.append(b.pop())


def audit(i):
    parts = [a] + [[] for _ in range(PADDING)] + [b]
    seen.append((len(sum(parts, [])), sum(map(len, parts))))


def main():
    for i in range(K):
        transaction.add(move, i)
        if i % 4 == 0:
            transaction.add(audit, i)
    transaction.run()
    bad = [counts for counts in seen if counts != (N, N)]
    if len(a) + len(b) != N:
        bad.append(("final", len(a), len(b)))
    print("BAD" if bad else "OK", len(bad), bad[:4])


main()
