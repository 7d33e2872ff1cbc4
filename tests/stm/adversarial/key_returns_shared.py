"""``sorted``/``max``/``min`` with a key function that returns shared lists, right after the section changed one.

Serial invariant (plain Python): keys are compared as they are when the
call runs, so after ``OWN["a"][0] = 1`` (a was [5], b is [3]),
``sorted(["a", "b"], key=lambda n: OWN[n])`` is ["a", "b"] and
``max(..., key=...)`` is "b". One thread suffices; concurrently, bumpers
change the lists while sorters check their result against the lists.

Attacks: ``sorted``/``max`` compared the shared lists the key function
returned in C, live: not the call's own write to one, and no version. Now an
application key function's results go through ``deep_view``, as the operands
of ``<`` do (``calls._keys_as_the_section_sees_them``).
"""
import transaction

K = 1500
SCORES = {"a": [5], "b": [3], "c": [4]}
OWN = {"a": [5], "b": [3]}
bad = []


def own(i):
    OWN["a"][0] = 1
    order = sorted(["a", "b"], key=lambda n: OWN[n])
    best = max(["a", "b"], key=lambda n: OWN[n])
    if order != ["a", "b"] or best != "b":
        bad.append(("own", i, order, best))
    OWN["a"][0] = 5


def bump(i):
    k = "abc"[i % 3]
    SCORES[k][0] = (SCORES[k][0] * 7 + i) % 10


def check(i):
    order = sorted("abc", key=lambda n: SCORES[n])
    vals = [SCORES[n][0] for n in order]
    if vals != sorted(vals):
        bad.append(("torn", i, order, vals))


def step(i):
    (own, bump, check)[i % 3](i)


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), sorted({b[0] for b in bad}), bad[:2])


main()
