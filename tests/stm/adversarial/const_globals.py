"""Two module settings bound once at the top level (numbers), switched together through ``globals()``.

Serial invariant: a switcher sets ``LO`` and ``HI`` to the same new value
(``g = globals(); g["LO"] = n; g["HI"] = n``), so every reader sees
``LO == HI``.

Attacks: names bound once to a number at the top level were taken as
constants and read without barriers; ``globals()`` rebinds them anyway,
half-way through an inevitable switcher (torn ``LO``/``HI``).
"""
import transaction

LO = 0
HI = 0
K = 3000
bad = []


def spin(n):
    t = 0
    for j in range(n):
        t += j
    return t


def switch(n):
    g = globals()
    g["LO"] = n
    spin(300)
    g["HI"] = n


def read(i):
    lo = LO
    spin(100)
    hi = HI
    if lo != hi:
        bad.append((i, lo, hi))


def step(i):
    if i % 10 == 0:
        switch(i)
    else:
        read(i)


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
