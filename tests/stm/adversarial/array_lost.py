"""A counter kept in a shared ``array.array``: read with ``max()``, then stored by index.

Serial invariant: every call adds one, so the counter ends at ``K``.

Attacks: mutable buffers. ``max(arr)`` is a pure builtin that reads the
array's contents directly, and an ``array.array`` has no versions, so an
optimistic section could read a value that a concurrent commit then
overwrites (a lost update). A section that reads a shared buffer must
become inevitable.
"""

import array

import transaction

K = 300
counter = array.array("q", [0])


def spin():
    x = 0
    for j in range(300):
        x += j
    return x


def increment(i):
    value = max(counter)
    spin()
    counter[0] = value + 1


def main():
    for i in range(K):
        transaction.add(increment, i)
    transaction.run()
    print("OK" if counter[0] == K else "BAD", "counter", counter[0], "expected", K)


main()
