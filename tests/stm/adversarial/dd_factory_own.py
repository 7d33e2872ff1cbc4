"""A section changes a shared ``defaultdict``'s ``default_factory``, then reads a missing key.

Serial invariant: after ``dd.default_factory = int``, ``dd["k"] += 1`` makes
``int()`` the missing value, so ``dd["k"]`` is 1 (with the old ``list``
factory it would raise ``TypeError``). One thread suffices.

Attacks: attributes that C code reads itself. ``default_factory`` is a
field of the C type, read by ``defaultdict.__missing__`` in C: a write to
it buffered by the engine would be invisible there, so the section must
write it for real (run inevitably) before the missing key is looked up.
"""

from collections import defaultdict

import transaction

dd = defaultdict(list)
bad = []


def job(i):
    dd.default_factory = int
    dd["k"] += 1
    if dd["k"] != 1:
        bad.append(("dd['k']", dd["k"]))


def main():
    transaction.add(job, 0)
    try:
        transaction.run()
    except Exception as exc:
        bad.append(("raised", repr(exc)))
    if dict(dd) != {"k": 1} or dd.default_factory is not int:
        bad.append(("final", dict(dd), dd.default_factory))
    print("BAD" if bad else "OK", len(bad), bad)


main()
