"""A shared iterator of job ids drained with ``[*JOBS]`` by whichever call comes
first (seventh round).

Serial invariant: the first call takes every id and the others take none,
so the ids taken add up to sum(range(N)) and each id is taken once.

Attacks: unpacking a shared iterator. ``next``, ``for`` and ``list(it)``
made the section inevitable first; a starred or unpacked one went through
the operand barrier, which handed the iterator over as it was, so an
attempt that later aborted had consumed its items for good.
"""
import transaction

N = 200
K = 400
JOBS = iter(list(range(N)))
TAKEN = []
COUNT = 0


def spin():
    x = 0
    for j in range(200):
        x += j
    return x


def take(i):
    global COUNT
    got = [*JOBS]
    COUNT += 1
    spin()
    TAKEN.extend(got)


def main():
    for i in range(K):
        transaction.add(take, i)
    transaction.run()
    ok = sorted(TAKEN) == list(range(N)) and COUNT == K
    print("OK" if ok else "BAD taken %d (sum %d, want %d) count %d" % (
        len(TAKEN), sum(TAKEN), sum(range(N)), COUNT))


main()
