"""A log kept in a shared ``bytearray`` grown with ``+=`` through a dict item.

Serial invariant: every call adds one byte, so the log ends with K bytes.

Attacks: augmented assignment to a mutable buffer. ``+=`` changed the shared
bytearray in place in an optimistic section, and a retry applied it again
(603 to 634 bytes for 600 calls; 3.13t itself hung in some runs, as with two
plain threads; fifth round). It now makes the section inevitable.
"""
import transaction

K = 600
store = {"log": bytearray(), "n": 0}


def job(i):
    store["n"] += 1            # every call conflicts with every other one
    store["log"] += b"y"


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    n = len(store["log"])
    print("OK" if n == K and store["n"] == K else "BAD %d bytes, n=%d, want %d" % (n, store["n"], K))


main()
