"""Methods of a class defined inside a section's function, reading that function's variables.

Serial invariant: the methods see the enclosing function's locals as plain
Python scoping says: ``total`` as changed by a nested ``nonlocal`` writer
(5), ``limit`` as the local 7 that shadows a global of the same name, never
the class body's own ``limit`` (class scopes are skipped). One thread
suffices.

Attacks: the rewriter's scopes around a class statement in a function. A
local that a nested function assigns lives in a ``Box``: a method reading
it must unwrap it, not return the box. A local named like a mutable global
(one the module declares ``global``) must stay a local in the method, not
be read through the global barrier. And a name the class body binds must
not be taken for the method's.
"""

import transaction

limit = 0


def set_limit(value):
    global limit                # a mutable global: barriered in this module
    limit = value


bad = []


def job(i):
    total = 0
    limit = 7                   # shadows the global

    def add(x):
        nonlocal total          # total lives in a Box
        total += x

    class Acc:
        limit = 99              # not visible to the methods

        def get(self):
            return total

        def below(self, x):
            return x < limit

    add(5)
    acc = Acc()
    if acc.get() != 5:
        bad.append(("nonlocal read by a method", repr(acc.get())))
    if not acc.below(3) or acc.below(10):
        bad.append(("local shadowing a global", acc.below(3), acc.below(10)))


def main():
    transaction.add(job, 0)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad)


main()
