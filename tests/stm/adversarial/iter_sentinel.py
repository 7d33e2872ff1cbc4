"""``next(iter(STACK.pop, None))`` against appenders.

Serial invariant: each id is pushed once and popped at most once:
``sorted(popped + STACK) == list(range(K))``.

Attacks: ``iter(bound_mutator, sentinel)`` goes to the builtin directly
(``_special_iter``), so ``STACK.pop`` is called by C on the live list in an
inevitable section with no version bump; an optimistic ``append`` that copied
the list before commits the popped id back.
"""
import transaction

STACK = []
popped = []
K = 400


def push(i):
    STACK.append(i)


def pop(i):
    if STACK:
        popped.append(next(iter(STACK.pop, None)))


def main():
    for i in range(K):
        transaction.add(push, i)
        transaction.add(pop, i)
    transaction.run()
    allids = sorted(popped + STACK)
    if allids != list(range(K)):
        print("BAD ids duplicated", len(allids) - len(set(allids)), "lost", len(set(range(K)) - set(allids)))
    else:
        print("OK", len(popped), len(STACK))


main()
