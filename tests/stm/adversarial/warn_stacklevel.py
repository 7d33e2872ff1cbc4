"""A helper warns with stacklevel=2 (the warning names its caller's line), as
library-style application helpers do, and another with the default
stacklevel (its own line); main records the warnings.

Serial invariant (plain Python): every warning is attributed to this file,
at the line of the helper's call in `call` (stacklevel=2), or at the
`warnings.warn` line of `own_line` (stacklevel=1).
Attacks: engine frames (section entry, call barrier) between the user's
frames, seen by warnings' frame walking (filters by module and "once per
location" registries key on it). Red-team round 17: named calls.py on
every run; warn is now called through calls._warn_from_the_application.
On 3.11 with the pure-Python barriers (fault injection) a call barrier's
frame stands between two application frames, which only 3.12's
skip_file_prefixes can skip: there the stacklevel=2 check is left out.
"""
import os
import sys
import warnings
import transaction

CALL_LINE = None
OWN_LINE = None


def deprecated_helper(i):
    warnings.warn("old api", DeprecationWarning, stacklevel=2)


def own_line(i):
    warnings.warn("own", UserWarning)


def call(i):
    deprecated_helper(i)   # <- the line the warning must name
    own_line(i)


def main():
    global CALL_LINE, OWN_LINE
    code = (call.__wrapped__ if hasattr(call, "__wrapped__") else call).__code__
    CALL_LINE = code.co_firstlineno + 1
    own = (own_line.__wrapped__ if hasattr(own_line, "__wrapped__") else own_line).__code__
    OWN_LINE = own.co_firstlineno + 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(3):
            transaction.add(call, i)
        transaction.run()
    here = __file__.rsplit("/", 1)[-1]
    where = {(w.filename.rsplit("/", 1)[-1], w.lineno, w.category.__name__) for w in caught}
    want = {(here, CALL_LINE, "DeprecationWarning"), (here, OWN_LINE, "UserWarning")}
    if sys.version_info < (3, 12) and os.environ.get("TORNADO_STM_FAULTS"):
        where = {w for w in where if w[2] == "UserWarning"}
        want = {w for w in want if w[2] == "UserWarning"}
    if where != want or len(caught) != 6:
        print("BAD", len(caught), where, "want", want); sys.exit(1)
    print("OK", sorted(where))


main()
