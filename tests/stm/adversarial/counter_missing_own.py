"""A shared ``Counter``'s missing keys inside a section, after the section's own writes.

Serial invariant: as in plain Python, a key the section just deleted reads
as 0 (``Counter.__missing__``) without being put back, and
``del counted["missing"]`` is ignored (``Counter.__delitem__``), also after
the section wrote the Counter. The two calls use different Counters, so
they may run in either order, or at once.

Attacks: a dict subclass's own rules for missing keys, in the engine's
buffered dict writes. Once a section writes a Counter, its deletes and
reads go through the engine's log of the dict rather than through
``Counter``'s methods: a key the log marks deleted must fall back to
``__missing__``, not raise ``KeyError``, and a delete of a key that is in
neither the log nor the Counter must be ignored as ``Counter`` does.
"""

from collections import Counter

import transaction

deleted = Counter(a=3)
counted = Counter()
bad = []


def delete_then_read(i):
    del deleted["a"]            # the section's first write to the Counter
    try:
        value = deleted["a"]
    except KeyError:
        value = "KeyError"
    if value != 0:
        bad.append(("deleted key read as", value))
    if "a" in deleted:
        bad.append(("reading a deleted key put it back", dict(deleted)))


def delete_missing(i):
    counted["a"] += 1           # the section has written the Counter
    try:
        del counted["missing"]
    except KeyError:
        bad.append(("del of a missing key raised KeyError",))


def main():
    transaction.add(delete_then_read, 0)
    transaction.add(delete_missing, 0)
    try:
        transaction.run()
    except Exception as exc:
        bad.append(("raised", repr(exc)))
    if dict(deleted) != {} or dict(counted) != {"a": 1}:
        bad.append(("final", dict(deleted), dict(counted)))
    print("BAD" if bad else "OK", len(bad), bad)


main()
