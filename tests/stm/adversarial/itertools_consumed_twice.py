"""itertools constructors that consume their iterable when they are made
(product, combinations, combinations_with_replacement, permutations), fed by a
generator or an iterator, inside sections; plus batched() of an object whose
__iter__ counts.
Serial invariant: each section records len(list(combinations(gen, 2))) == n*(n-1)/2
for the n active players it filtered with a generator, PAIRS["n"] totals the sum,
and every other form matches plain CPython (product of 3x2 = 6, ...).
Attacks: calls.call_reading calls a 'pure' callable that is not in LAZY_CALLABLES,
sees that its result is an iterator, and calls it AGAIN on read shadows: the
first call already used the generator up, the second gets it empty.
"""
import itertools
import sys
import transaction

PLAYERS = [{"id": k, "active": k % 3 != 0} for k in range(12)]
PAIRS = {"n": 0, "sections": 0}
BAD = []


def schedule(round_no):
    active = (p["id"] for p in PLAYERS if p["active"])
    games = list(itertools.combinations(active, 2))
    n = sum(1 for p in PLAYERS if p["active"])
    if len(games) != n * (n - 1) // 2:
        BAD.append(("combinations", round_no, len(games), n * (n - 1) // 2))
    PAIRS["n"] += len(games)
    PAIRS["sections"] += 1


def forms(i):
    got = {
        "product": len(list(itertools.product((x for x in range(3)), "ab"))),
        "product_iter": len(list(itertools.product(iter([1, 2, 3]), repeat=2))),
        "permutations": len(list(itertools.permutations(iter("abc")))),
        "cwr": len(list(itertools.combinations_with_replacement((c for c in "ab"), 2))),
    }
    want = {"product": 6, "product_iter": 9, "permutations": 6, "cwr": 3}
    if got != want:
        BAD.append(("forms", i, got))


class Batch:
    opened = 0

    def __init__(self, items):
        self.items = items

    def __iter__(self):
        Batch.opened += 1
        return iter(self.items)


def batches(i):
    if hasattr(itertools, "batched"):               # (Python 3.12 and later)
        list(itertools.batched(Batch([1, 2, 3]), 2))
    else:
        list(itertools.pairwise(Batch([1, 2, 3])))


def main():
    for i in range(300):
        transaction.add(schedule, i)
        if i % 10 == 0:
            transaction.add(forms, i)
            transaction.add(batches, i)
    transaction.run()
    n = sum(1 for p in PLAYERS if p["active"])
    ok = not BAD and PAIRS["n"] == 300 * n * (n - 1) // 2 and Batch.opened == 30
    print("OK" if ok else "BAD", PAIRS, "batched __iter__ calls", Batch.opened, "of 30", BAD[:3])
    return 0 if ok else 1


sys.exit(main())
