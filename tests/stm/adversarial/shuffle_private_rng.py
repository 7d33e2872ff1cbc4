"""A shared list shuffled by a ``random.Random`` the section made (sixth round).

Serial invariant: every shuffle records the order it made in ``hist``, so the
list always equals the last recorded order and stays a permutation.

Attacks: the table said ``Random.shuffle`` changes only the generator; the
shuffle permuted the live list unversioned (9 runs of 10 BAD), or went to
the section's copy and was lost. It now writes its list argument too.
"""
import random
import transaction

L = list(range(12))
hist = [tuple(L)]
bad = []


def shuffler(i):
    rng = random.Random(i)
    rng.shuffle(L)
    hist.append(tuple(L))


def checker(i):
    if tuple(L) != hist[-1]:
        bad.append(i)


def main():
    for i in range(1500):
        transaction.add(shuffler if i % 3 == 0 else checker, i)
    transaction.run()
    if tuple(L) != hist[-1] or sorted(L) != list(range(12)):
        bad.append("final")
    print("BAD %d %r" % (len(bad), bad[:5]) if bad else "OK")


main()
