"""Units moved between two shared bytearrays; audits join them into bytes.

Serial invariant: ``A[0] + B[0] == 200`` between calls, so every audit
sees a total of 200.

Attacks: mutable buffers read by C code through a container the section
made: ``b"".join([A, B])`` hands ``bytes.join`` (``pure``) a fresh list, and
the buffers nested in it are neither containers nor instances, so nothing
makes the audit inevitable or records a read. The mover changes the
buffers in place (inevitably): an optimistic audit can see half a move.
"""

import transaction

K = 600
A = bytearray([100])
B = bytearray([100])
bad = []


def move(i):
    A[0] -= 1
    for _ in range(300):
        pass
    B[0] += 1


def back(i):
    B[0] -= 1
    for _ in range(300):
        pass
    A[0] += 1


def audit(i):
    both = b"".join([A, B])
    if both[0] + both[1] != 200:
        bad.append(("torn", both[0], both[1]))


def main():
    for i in range(K):
        transaction.add((move, audit, back, audit)[i % 4], i)
    transaction.run()
    if A[0] + B[0] != 200:
        bad.append(("final", A[0], B[0]))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
