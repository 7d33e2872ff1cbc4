"""Objects with an application __del__ (appending to a shared list) made by
calls that conflict (a contended counter), with sys.unraisablehook recording
what Python reports as "Exception ignored in ...".

Serial invariant (plain Python, and the serial backend): no unraisable
exception is reported; one append per call's object.
Attacks: the finalizer of an object made by an attempt that aborts ran in the
dropped transaction and ended by raising the engine's AbortSection out of
__del__: CPython reported it as unraisable (the finalizer's work now goes
with the attempt, silently: section._finalize_now_or_after). Red-team round
20 (del_unraisable, del_print_abort, finalize_cb_abort).
"""
import sys
import transaction

UNRAISABLE = []
# A builtin for the hook: an application function would run in the doomed attempt too
sys.unraisablehook = UNRAISABLE.append
CLOSED = []
C = {"n": 0}
K = 400

class Res:
    def __init__(self, i):
        self.i = i
    def __del__(self):
        CLOSED.append(self.i)

def step(i):
    r = Res(i)
    n = C["n"]
    x = 0
    for j in range(300):
        x += j
    C["n"] = n + 1
    del r

def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    import gc
    gc.collect()
    if UNRAISABLE or len(CLOSED) != K or len(set(CLOSED)) != K:
        print("BAD", len(UNRAISABLE), sorted({type(u.exc_value).__name__ for u in UNRAISABLE}),
              len(CLOSED), len(set(CLOSED)))
        sys.exit(1)
    print("OK", len(CLOSED))

main()
