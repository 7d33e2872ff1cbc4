"""``match`` on a shared dict right after the section's own write.

Serial invariant: the value a mapping pattern captures is the value just
written. One thread suffices.

Attacks: ``match`` and comprehension unpacking. A mapping pattern reads the
subject's keys in C: unless the subject is read through a barrier first,
it sees the committed dict and misses the section's buffered write.
"""

import transaction

state = {"a": 0, "b": 0}
bad = []


def step(i):
    state["a"] += 1
    match state:
        case {"a": a, "b": b}:
            if a != state["a"]:
                bad.append(("match saw stale a", a, state["a"], b))
    state["b"] += 1


def main():
    for i in range(20):
        transaction.add(step, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
