"""A shared application generator hands out ids and updates a dict as it goes.

Serial invariants: the ids taken are exactly ``0..K-1``, each once, and
``state["next"] == state["issued"]`` between calls. A generator made by one
section and resumed by later ones keeps counting.

Attacks: generators are not rolled back. Resuming a generator created
outside the running section (by ``next()`` or a ``for`` loop) runs its frame
in place, which cannot be undone: the section must be inevitable, and the
generator's own writes to ``state`` must commit with it.
"""

import transaction

K = 300
state = {"next": 0, "issued": 0}


def id_generator():
    while True:
        n = state["next"]
        state["next"] = n + 1
        yield n


ids = id_generator()
made_in_a_section = []
taken = []
bad = []


def take(i):
    taken.append(next(ids))
    state["issued"] += 1


def take_with_for(i):
    for n in ids:
        break
    state["issued"] += 1
    taken.append(n)


def make_and_resume(i):
    def ticks():
        k = 0
        while True:
            state["issued"] += 0
            k += 1
            yield k
    if not made_in_a_section:
        made_in_a_section.append(ticks())
    next(made_in_a_section[0])


def audit(i):
    if state["next"] != state["issued"]:
        bad.append(("audit", dict(state)))


def main():
    for i in range(K):
        transaction.add(take if i % 2 == 0 else take_with_for, i)
        if i % 10 == 0:
            transaction.add(make_and_resume, i)
            transaction.add(audit, i)
    transaction.run()
    if sorted(taken) != list(range(K)):
        bad.append(("ids", len(set(taken)), max(taken)))
    if state["next"] != K:
        bad.append(("next", state))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
