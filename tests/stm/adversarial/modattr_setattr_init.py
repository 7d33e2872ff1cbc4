"""A tally whose initial value comes set at top level by setattr in a loop,
rebound through the module object.

Serial invariant: every call adds 1 to hits: hits == N.
Attacks: the rewriter records as "read plainly" only names the module's
symbol table shows assigned at top level (Rewriter.module_names); a name bound
at top level by setattr() is not, so registry.reads_plainly says no and
setattr(ME, "hits", ...) is an optimistic write with no RESHAPE guard.
Red-team round 17: BAD 2/3 on 2 threads (fixed as modattr_starimport).
"""
import sys
for _name in ("hits",):
    setattr(sys.modules[__name__], _name, 0)
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
