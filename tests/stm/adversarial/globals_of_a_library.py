"""Two settings kept in a library module (``colorsys``, which no section
instruments), written through one of its functions' ``__globals__`` (seventh round).

Serial invariant: each writer moves ``a`` up and ``b`` down by one in one call,
so readers always see ``a + b == 0`` and the run ends at a == -b == writers.

Attacks: a library module's dict reached through ``f.__globals__``. Library
modules are read without the read log until instrumented code first writes
one (``vars(mod)`` and ``mod.x = v`` turn it versioned); ``__globals__`` did
not, so readers kept reading ``a`` and ``b`` plainly, torn.
"""
import colorsys

import transaction

K = 1500
bad = []
# Set up unbarriered (a string exec'd), so that only __globals__ could make
# the module versioned.
exec("import colorsys; colorsys._adv_a = 0; colorsys._adv_b = 0")


def spin():
    x = 0
    for j in range(200):
        x += j
    return x


def move(i):
    g = colorsys.rgb_to_hsv.__globals__
    g["_adv_a"] = g["_adv_a"] + 1
    spin()
    g["_adv_b"] = g["_adv_b"] - 1


def check(i):
    x = colorsys._adv_a
    spin()
    y = colorsys._adv_b
    if x + y != 0:
        bad.append((x, y))


def main():
    for i in range(K):
        transaction.add(move if i % 2 else check, i)
    transaction.run()
    if colorsys._adv_a != K // 2 or colorsys._adv_b != -(K // 2):
        bad.append(("final", colorsys._adv_a, colorsys._adv_b))
    print("BAD %r" % bad[:4] if bad else "OK")


main()
