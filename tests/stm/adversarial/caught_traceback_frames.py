"""Exceptions caught inside a call and their tracebacks read, as logging's
``exception()`` or ``traceback.format_exc()`` would: raised by application
code two calls down, by a library function (``int("x")``), by a stored
exception thrown into an application generator; every call also bumps a
shared counter.

Serial invariant: each traceback names only the application's frames, in the
order plain Python gives (``step``, ``middle``, ``inner``; ``step``;
``step``, ``gen``), and the counter ends at K.
Attacks: the pure-Python barriers (fault injection) left their own frames
(barriers.call, calls.call_optimistic, section._step...) in the tracebacks
of exceptions application code catches (barriers.call now drops them).
Red-team round 19 (exc_throw_tb).
"""
import sys
import transaction

STATS = {"n": 0}
FAILED = {"exc": LookupError("down")}
BAD = []
K = 300


def inner(i):
    raise ValueError(i)


def middle(i):
    return inner(i) + 1


def gen():
    while True:
        yield 1


def names(error):
    tb, found = error.__traceback__, []
    while tb is not None:
        found.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return found


def step(i):
    n = STATS["n"]
    seen = []
    try:
        middle(i)
    except ValueError as e:
        seen.append(names(e))
    try:
        int("x%d" % i)
    except ValueError as e:
        seen.append(names(e))
    g = gen()
    next(g)
    try:
        g.throw(KeyError(i))
    except KeyError as e:
        seen.append(names(e))
    if seen != [["step", "middle", "inner"], ["step"], ["step", "gen"]]:
        BAD.append((i, seen))
    STATS["n"] = n + 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if BAD or STATS["n"] != K:
        print("BAD", len(BAD), BAD[:2], STATS["n"])
        sys.exit(1)
    print("OK", STATS["n"])


main()
