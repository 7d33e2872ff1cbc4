"""Each call counts two shared lists through ``sum([la, lb], [])`` and appends the count to one.

Serial invariant: the ``i``-th call runs with ``i`` items in the two lists
together, so the values appended are ``0 .. K-1``, each once.

Attacks: the read set of a section that reads shared lists only through a
fresh container given to an uninstrumented builtin. ``[la, lb]`` is the
section's own list, so it needs no barrier; ``sum`` then reads the shared
lists inside it in C. Unless the engine records them as read, two calls can
count the same lengths, both commit (neither read is validated) and append
the same value.
"""

import transaction

K = 400
la = []
lb = []


def job(i):
    n = len(sum([la, lb], []))
    if i % 2:
        la.append(n)
    else:
        lb.append(n)


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    values = sorted(la + lb)
    bad = []
    if values != list(range(K)):
        bad.append(("values", len(set(values)), "distinct of", K, "max", values[-1]))
    print("BAD" if bad else "OK", len(bad), bad)


main()
