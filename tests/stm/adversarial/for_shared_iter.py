"""A work queue as a shared iterator, taken one job at a time with ``for ... break``.

Serial invariant: each call takes the next job, so the jobs done are exactly
``0..K-1``, each once.

Attacks: shared iterators consumed by a ``for`` statement rather than
``next()``: the loop's implicit ``iter()``/``next()`` on an iterator made
outside the section must make it inevitable, or a retried section takes a
second job and the first is lost.
"""

import transaction

K = 300
jobs = iter(range(100000))
done = []
stats = {"n": 0}


def worker(i):
    for job in jobs:
        break
    stats["n"] += 1             # every call conflicts with every other one
    done.append(job)


def main():
    for i in range(K):
        transaction.add(worker, i)
    transaction.run()
    ok = sorted(done) == list(range(K))
    print("OK" if ok else "BAD", "max", max(done), "distinct", len(set(done)), "n", len(done))


main()
