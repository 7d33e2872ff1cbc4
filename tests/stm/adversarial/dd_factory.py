"""A ``defaultdict`` whose factory is an application function allocating ids.

Serial invariant: every key gets a distinct id, the ids are ``0..n-1`` and
``seq["next"]`` equals the number of keys.

Attacks: application code called back from C. A missing key makes
``defaultdict.__missing__`` (C) call ``new_id``, an instrumented function,
inside the section: its write to ``seq`` and the store of the new key must
commit or abort together.
"""

from collections import defaultdict

import transaction

seq = {"next": 0}


def new_id():
    n = seq["next"]
    seq["next"] = n + 1
    return n


ids = defaultdict(new_id)
bad = []


def lookup(i):
    return ids[f"u{i % 50}"], ids[f"u{(i * 7) % 50}"]   # a missing key calls new_id()


def audit(i):
    values = list(ids.values())
    if len(set(values)) != len(values) or seq["next"] != len(values):
        bad.append(("audit", len(values), len(set(values)), seq["next"]))


def main():
    for i in range(300):
        transaction.add(lookup if i % 5 else audit, i)
    transaction.run()
    audit(0)
    if sorted(ids.values()) != list(range(len(ids))):
        bad.append(("final ids", sorted(ids.values())[:5], len(ids)))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
