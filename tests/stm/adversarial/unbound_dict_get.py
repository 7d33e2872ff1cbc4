"""``dict.get(D, "k", 0)`` inside a section.

Serial invariant: K calls each add 1 to ``D["k"]``: ``D["k"] == K``; no call
can raise.

Attacks: the special handler for ``dict.get`` reads ``f.__self__``, which
the unbound method descriptor has not: AttributeError.
"""
import transaction

D = {}
K = 100


def step(i):
    D["k"] = dict.get(D, "k", 0) + 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    print("BAD" if D.get("k") != K else "OK", D.get("k"), "of", K)


main()
