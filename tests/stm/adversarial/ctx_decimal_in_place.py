"""The script configures decimal before run() (getcontext().prec = 10, a common top-of-script
line); queued calls now and then change the precision in place (getcontext().prec = 4, a
configuration change), while many calls compute two quotients each in plain decimal arithmetic.
Serial invariant: each call's two quotients use the same precision (the change is either before
or after the whole call): a == b.
Attacks: every worker shared the script's one decimal.Context object, changed in place by
the reconfiguring calls while optimistic calls did plain decimal arithmetic (a torn read);
each worker now has a copy of its own, a change made in place is handed on as the changing
call commits, and a call that began before the change and would commit after it runs again.
"""
import decimal
import transaction

decimal.getcontext().prec = 10
ONE, SEVEN = decimal.Decimal(1), decimal.Decimal(7)
TORN = []
DONE = {"n": 0}


def compute(i):
    a = ONE / SEVEN
    x = 0
    for j in range(3000):
        x += j
    b = ONE / SEVEN
    DONE["n"] += 1
    DONE[len(str(a))] = DONE.get(len(str(a)), 0) + 1
    if str(a) != str(b):
        TORN.append((i, str(a), str(b)))


def reconfigure(i):
    decimal.getcontext().prec = 4 if i % 2 else 10


N = 400
for i in range(N):
    transaction.add(compute, i)
    if i % 4 == 0:
        transaction.add(reconfigure, i // 4)
transaction.run()
print(len(TORN), TORN[:3], DONE, decimal.getcontext().prec)
print("OK" if not TORN and DONE["n"] == N else "BAD")
import os
if os.environ.get("STATS"):
    from tornado_stm import stm
    s = stm.stats()
    print({k: v for k, v in s.items() if k in ("commits", "aborts", "inevitable")})
