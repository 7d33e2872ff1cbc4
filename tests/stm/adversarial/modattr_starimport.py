"""A tally whose initial value comes from a star import of a defaults module,
rebound through the module object.

Serial invariant: every call adds 1 to hits: hits == N.
Attacks: the rewriter records as "read plainly" only names the module's
symbol table shows assigned at top level (Rewriter.module_names); a name bound
by `from appstate.defaults import *` is not, so registry.reads_plainly says no and
setattr(ME, "hits", ...) is an optimistic write with no RESHAPE guard.
Red-team round 17: BAD 1/1 on 2 threads. The rewriter now reports as read
plainly every global name a function reads that is not a builtin's.
"""
import sys
from appstate.defaults import *
import transaction

N = 1000
ME = sys.modules[__name__]


def bump(i):
    cur = hits
    x = 0
    for k in range(300):
        x += k * i
    setattr(ME, "hits", cur + 1)


def main():
    for i in range(N):
        transaction.add(bump, i)
    transaction.run()
    if hits != N:
        print("BAD hits", hits, "!=", N)
        sys.exit(1)
    print("OK", hits)


main()
