"""A 2-byte counter in a shared ``bytearray``: read with ``bytes()``, written by slice.

Serial invariant: every call adds one, so the counter ends at ``K``.

Attacks: mutable buffers, as ``array_lost.py`` does with another type and
other readers: ``bytes(buf)`` and ``int.from_bytes`` are pure calls that copy
the unversioned contents, and the slice assignment writes them back.
"""

import transaction

K = 300
buf = bytearray(2)


def spin():
    x = 0
    for j in range(300):
        x += j
    return x


def increment(i):
    value = int.from_bytes(bytes(buf), "little")
    spin()
    buf[0:2] = (value + 1).to_bytes(2, "little")


def main():
    for i in range(K):
        transaction.add(increment, i)
    transaction.run()
    n = int.from_bytes(bytes(buf), "little")
    print("OK" if n == K else "BAD", "counter", n, "expected", K)


main()
