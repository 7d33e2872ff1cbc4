"""A shared bytearray used as a printf-style template with a number: ``T % 7``.

writer(v) rewrites the six letters of the template one by one, so between
calls the template always holds six equal letters. Readers format it with a
literal, a local number, ``len()`` of something, and through a dict.
Serial invariant: every formatted result starts with six equal letters.
Attacks: the rewriter left the left operand of ``x % number`` without a
barrier ("a container combined with a number raises TypeError"), but a
bytearray's ``%`` formats, reading the whole live buffer: readers saw a
template half rewritten by an inevitable writer (red-team round 30).
"""
import transaction

T = bytearray(b"AAAAAA%d")
H = {"t": T}
BADS = []


def writer(v):
    c = 65 + v % 26
    for k in range(6):
        T[k] = c
        s = 0
        for j in range(60):
            s += j


def reader(i):
    n = 7
    form = i % 4
    if form == 0:
        r = T % n
    elif form == 1:
        r = T % 7
    elif form == 2:
        r = H["t"] % n
    else:
        r = T % len(H)
    if len(set(r[:6])) != 1:
        BADS.append((i, bytes(r)))


for i in range(400):
    transaction.add(writer, i + 1)
    transaction.add(reader, i)
transaction.run()
print("OK" if not BADS else "BAD", len(BADS), BADS[:3])
