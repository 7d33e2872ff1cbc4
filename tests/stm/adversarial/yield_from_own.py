"""``yield from`` over a shared list the section has just appended to.

Serial invariant: after ``ROWS.append(i)``, ``list(rows_gen())`` (which does
``yield from ROWS``) ends with ``i``, in the same call.

Attacks: the operand of ``yield from`` is iterated by the interpreter
itself: unless the rewriter hands it the section's view, it reads the
committed list and misses the section's buffered append.
"""

import transaction

ROWS = []
bad = []


def rows_gen():
    yield from ROWS


def job(i):
    ROWS.append(i)
    seen = list(rows_gen())
    if not seen or seen[-1] != i:
        bad.append(("own append missed", i, seen[-1:]))


def main():
    for i in range(30):
        transaction.add(job, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
