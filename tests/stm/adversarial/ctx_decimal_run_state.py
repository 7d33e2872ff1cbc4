"""The decimal context of a run is one, as in a serial run, however the calls reach it.

Three runs. In the first the script has not touched decimal before run():
each worker's context would be made lazily by C arithmetic; one call sets
``getcontext().prec = 5`` and raises a flag, readers divide 1 by 7. In the
second, calls divide (raising ``Inexact`` by plain arithmetic, no context
call) and record that they did; readers record how many did and whether
``Inexact`` is raised. In the third the script holds its context
(``CTX = decimal.getcontext()``) and one call sets ``CTX.prec = 7`` on it.
Serial invariant: a reader that saw the setter's flag computes at the new
precision, one that did not at the old; a reader that saw a division done
sees ``Inexact`` raised; after each run the script's context (and CTX) has
what the calls left.
Attacks: a worker context made lazily by C code (nobody's copy: the change
was lost); flags raised by arithmetic stayed in the worker's own copy;
a change made in place on the script's context reached no worker.
"""
import transaction

N = 150
FLAG = [False]
SEEN = []
DONE = []
BAD = []


def set_precision(i):
    import decimal
    decimal.getcontext().prec = 5
    FLAG[0] = True


def read_precision(i):
    import decimal
    x = 0
    for j in range(300):
        x += j
    flag = FLAG[0]
    SEEN.append((flag, len(str(decimal.Decimal(1) / decimal.Decimal(7)))))


def check_readers(new_digits, old_digits, phase):
    wrong = [seen for seen in SEEN if seen != ((True, new_digits) if seen[0] else (False, old_digits))]
    if wrong:
        BAD.append((phase, len(wrong), wrong[:3]))
    SEEN.clear()
    FLAG[0] = False


for i in range(N):
    transaction.add(set_precision if i == N // 3 else read_precision, i)
transaction.run()
check_readers(7, 30, "lazy context")
import decimal  # noqa: E402  (the first run must find decimal untouched)

if decimal.getcontext().prec != 5:
    BAD.append(("lazy context after run", decimal.getcontext().prec))
decimal.getcontext().prec = 28


def divide(i):
    str(decimal.Decimal(1) / decimal.Decimal(7 + i))
    DONE.append(i)


def read_flags(i):
    x = 0
    for j in range(500):
        x += j
    done = len(DONE)
    SEEN.append((done, bool(decimal.getcontext().flags[decimal.Inexact])))


decimal.getcontext().clear_flags()
for i in range(N):
    transaction.add(divide if i % 3 == 0 else read_flags, i)
transaction.run()
missed = [seen for seen in SEEN if seen[0] and not seen[1]]
if missed or not decimal.getcontext().flags[decimal.Inexact]:
    BAD.append(("flags", len(missed), missed[:3]))
SEEN.clear()

CTX = decimal.getcontext()


def set_script_precision(i):
    CTX.prec = 7
    FLAG[0] = True


for i in range(N):
    transaction.add(set_script_precision if i == N // 3 else read_precision, i)
transaction.run()
check_readers(9, 30, "script's context")
if CTX.prec != 7 or decimal.getcontext().prec != 7:
    BAD.append(("script's context after run", CTX.prec, decimal.getcontext().prec))
print(BAD[:3])
print("BAD" if BAD else "OK")
