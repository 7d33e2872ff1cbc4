"""``with transaction.atomic:`` around a whole batch in the main program (a
setup phase made atomic, as PyPy-STM code did), ``transaction.run()`` inside
the block; then a second batch outside any block.

Serial invariant: the queued calls run (in a serial run, in order) and the
program ends: TOTAL == 40, and the calls inside the block ran in order.
Attacks: an atomic block outside a section holds the world lock W; run()
inside it waited for workers that could never commit (a hang). It now runs
the calls one after another on the calling thread. Red-team round 19.
"""
import sys
import transaction

TOTAL = {"n": 0}
ORDER = []


def work(i):
    TOTAL["n"] += 1
    ORDER.append(i)


def main():
    with transaction.atomic:
        for i in range(20):
            transaction.add(work, i)
        transaction.run()
    in_block = list(ORDER)
    for i in range(20, 40):
        transaction.add(work, i)
    transaction.run()
    if TOTAL["n"] != 40 or in_block != list(range(20)) or sorted(ORDER) != list(range(40)):
        print("BAD", TOTAL, in_block[:5])
        sys.exit(1)
    print("OK", TOTAL)


main()
