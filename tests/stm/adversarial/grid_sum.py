"""A grid of shared rows: moves shift a unit between two cells, audits sum the grid.

Serial invariant: a move takes a unit from one cell and gives it to another,
so every audit's ``sum(map(sum, grid))`` is ``H * W * 10``.

Attacks: uninstrumented builtins reading the shared containers nested in
their argument, concurrently: ``map(sum, grid)`` hands each row to ``sum``
in C, past the barriers. Unless the engine records the nested rows as read
(and validates them at commit), an audit can sum the grid while a move's
commit is half published, with a unit taken but not yet given, and still
commit.
"""

import transaction

H, W = 40, 40
K = 500
grid = [[10] * W for _ in range(H)]
totals = []


def move(i):
    r1, c1 = (i * 7) % H, (i * 11) % W
    r2, c2 = (i * 13 + 5) % H, (i * 17 + 3) % W
    grid[r1][c1] -= 1
    grid[r2][c2] += 1


def audit(i):
    totals.append(sum(map(sum, grid)))


def main():
    for i in range(K):
        transaction.add(move, i)
        if i % 2 == 0:
            transaction.add(audit, i)
    transaction.run()
    expected = H * W * 10
    bad = [total for total in totals if total != expected]
    if sum(map(sum, grid)) != expected:
        bad.append(("final", sum(map(sum, grid))))
    print("BAD" if bad else "OK", len(bad), bad[:5])


main()
