"""``[k, v] in pending`` where ``pending`` is a list the call made of shared rows.

Movers add 1 to one row's value and take 1 from another's, with work in
between; finders copy the rows into a comprehension and rebuild each row's
value by asking ``[k, v] in pending`` for every v, then sum them.
Serial invariant: the values always sum to 0.
Attacks: membership in a local the rewriter knows the call made was plain
Python: C code compared the needle with the shared rows' live contents
(a mover's commit seen half-way).
"""
import transaction

ROWS = [[j, 0] for j in range(6)]
TORN = []


def mover(i):
    a = ROWS[i % 6]
    b = ROWS[(i * 5 + 1) % 6]
    a[1] += 1
    x = 0
    for j in range(300):
        x += j
    b[1] -= 1


def finder(i):
    pending = [row for row in ROWS]
    total = 0
    for k in range(6):
        for v in range(-40, 41):
            if [k, v] in pending:
                total += v
                break
    if total != 0:
        TORN.append(total)


for i in range(400):
    transaction.add(mover if i % 2 else finder, i)
transaction.run()
print(len(TORN), TORN[:5])
print("BAD" if TORN else "OK")
