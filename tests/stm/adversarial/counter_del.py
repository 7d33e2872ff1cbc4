"""Concurrent calls delete keys of a shared ``Counter``, present and missing, and count again.

Serial invariant: every call leaves its key ``i % 10`` at 1 (``+= 1``,
``del``, ``+= 1``), and deleting a missing key is ignored, so the run ends
normally with the ten keys summing to 10.

Attacks: ``Counter``'s own rules for missing keys (``__delitem__`` ignores
one, ``__missing__`` reads one as 0) in the engine's buffered dict writes,
under conflicts: a call deletes a key another call may be counting, and
both the delete of a missing key and the ``+=`` after a delete must behave
as they do on the ``Counter`` itself.
"""

from collections import Counter

import transaction

K = 200
c = Counter()
bad = []


def job(i):
    c[i % 10] += 1
    del c[1000 + i]             # missing: Counter ignores it
    del c[i % 10]               # present
    c[i % 10] += 1              # reads the deleted key: 0


def main():
    for i in range(K):
        transaction.add(job, i)
    try:
        transaction.run()
    except Exception as exc:
        bad.append(("raised", repr(exc)))
    if dict(c) != {k: 1 for k in range(10)}:
        bad.append(("final", dict(c)))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
