"""``number_of_transactions_in_last_run()`` after a queued call raised.

200 calls each work and count themselves; call 60 raises instead. run()
re-raises it; the calls that other workers had already taken when it
committed find the run over and do nothing.
Serial invariant: the calls that ran are those that counted plus the one
that raised: number_of_transactions_in_last_run() == counted + 1.
Attacks: calls taken after the run ended, which ran nothing, were counted.
"""
import transaction

COUNTED = {"n": 0}


class Stop(Exception):
    pass


def spin():
    x = 0
    for j in range(2000):
        x += j
    return x


def step(i):
    spin()
    if i == 60:
        raise Stop(i)
    COUNTED["n"] += 1


for i in range(200):
    transaction.add(step, i)
try:
    transaction.run()
except Stop:
    pass
ran = transaction.number_of_transactions_in_last_run()
print("ran", ran, "counted", COUNTED["n"])
print("OK" if ran == COUNTED["n"] + 1 else "BAD")
