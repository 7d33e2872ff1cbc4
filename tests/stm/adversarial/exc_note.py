"""Notes added to one shared exception object by every call.

Serial invariant: after K calls the shared exception holds exactly K notes,
each call's once, and ``stats["n"] == K``.

Attacks: ``BaseException.*`` is ``pure`` in the policy table, but
``add_note`` appends to the exception's ``__notes__`` list in C.
"""

import transaction

K = 300
LAST = ValueError("shared failure")
stats = {"n": 0}


def annotate(i):
    stats["n"] += 1             # every call conflicts with every other one
    LAST.add_note(f"seen by {i}")


def main():
    for i in range(K):
        transaction.add(annotate, i)
    transaction.run()
    notes = getattr(LAST, "__notes__", [])
    bad = []
    if len(notes) != K or len(set(notes)) != K or stats["n"] != K:
        bad.append(("notes", len(notes), "distinct", len(set(notes)), "n", stats["n"]))
    print("BAD" if bad else "OK", bad)


main()
