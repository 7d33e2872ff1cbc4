"""Ticket dispensers: a shared ``list_iterator`` and a shared ``itertools.count()``.

Serial invariant: each call takes the next ticket from each, so the tickets
taken are exactly ``0..K-1`` from both, with no duplicate.

Attacks: shared iterators advanced by ``next()`` in sections that otherwise
do not conflict (each writes its own key): nothing else forces them to
serialize, so only the iterator itself must make them inevitable.
"""

import itertools

import transaction

K = 400
tickets = iter(list(range(10000)))
counter = itertools.count()
taken = {}
counted = {}


def spin():
    x = 0
    for j in range(200):
        x += j
    return x


def take(i):
    ticket = next(tickets)
    number = next(counter)
    spin()
    taken[i] = ticket
    counted[i] = number


def main():
    for i in range(K):
        transaction.add(take, i)
    transaction.run()
    bad = []
    tickets_taken, numbers = sorted(taken.values()), sorted(counted.values())
    if tickets_taken != list(range(K)):
        bad.append(("tickets", len(set(tickets_taken)), len(tickets_taken), tickets_taken[-1]))
    if numbers != list(range(K)):
        bad.append(("count", len(set(numbers)), len(numbers), numbers[-1]))
    print("BAD" if bad else "OK", bad)


main()
