"""String formatting of shared objects right after the section wrote them.

Serial invariant: after ``acct.bal = 5`` every way of formatting the
balance gives ``"5"``; after ``rows[0][0] = 7`` every way of formatting
``rows`` shows the 7. One thread suffices.

Attacks: ``str`` methods that read what their arguments hold, in C:
``str.format`` reads the attributes and items its format string names
(``'{0.bal}'``, ``'{0[0][0]}'``), and ``format``, ``join`` and ``%`` read
the lists nested in their arguments. All of them run past the barriers,
where the section's buffered writes are not: the engine must hand them the
section's view (or run them inevitably). Each form has its own section.
"""

import transaction


class Account:
    def __init__(self):
        self.bal = 0


acct = Account()
rows = [[0, 0], [0, 0]]
bad = []


def set_balance():
    acct.bal = 5


def set_row():                  # rows == [[7, 0], [0, 0]]
    rows[0][0] = 7


#: (form, the write before it, the form as a function, its serial value)
CASES = [
    ("'{0.bal}'.format(acct)", set_balance, lambda: "{0.bal}".format(acct), "5"),
    ("'{a.bal}'.format(a=acct)", set_balance, lambda: "{a.bal}".format(a=acct), "5"),
    ("format(acct.bal)", set_balance, lambda: format(acct.bal), "5"),
    ("f'{acct.bal}'", set_balance, lambda: f"{acct.bal}", "5"),
    ("'{0[0][0]}'.format(rows)", set_row, lambda: "{0[0][0]}".format(rows), "7"),
    ("'{}'.format(rows)", set_row, lambda: "{}".format(rows), "[[7, 0], [0, 0]]"),
    ("'%s' % (rows,)", set_row, lambda: "%s" % (rows,), "[[7, 0], [0, 0]]"),
    ("' '.join(map(str, rows))", set_row, lambda: " ".join(map(str, rows)), "[7, 0] [0, 0]"),
]


def own(i):
    form, write, read, expected = CASES[i]
    write()
    got = read()
    if got != expected:
        bad.append((form, got))


def main():
    for i in range(len(CASES)):
        acct.bal = 0
        rows[:] = [[0, 0], [0, 0]]
        transaction.add(own, i)
        transaction.run()
    print("BAD" if bad else "OK", len(bad), bad)


main()
