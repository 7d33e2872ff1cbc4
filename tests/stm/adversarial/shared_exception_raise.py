"""Exception objects kept in shared state and raised again by every call:
a module-level sentinel raised inside an ``except`` block (Python sets its
__context__) or ``from`` another (its __cause__), and a stored failure
re-raised by a negative cache (each raise prepends the frames it passes
through to its __traceback__). Every call also bumps a shared counter.

Serial invariant: a call that catches the sentinel sees the context or
cause it raised itself, and its own ``lookup`` frame first in the traceback;
after K calls the stored failure's traceback holds exactly K entries for
``check`` and K for ``step``.
Attacks: raising an exception object the section did not make writes its
__traceback__, __context__ and __cause__ in place, from C: two optimistic
sections overwrote each other's, and attempts that aborted left their
entries (barriers.raised now makes such a section inevitable first).
Red-team round 19 (shared_exc_instance, exc_cached_tb).
"""
import sys
import transaction


class NotFound(Exception):
    pass


NOT_FOUND = NotFound("not found")
FAILED = {"exc": LookupError("backend down")}
STATS = {"n": 0}
BAD = []
K = 400


def lookup(i):
    try:
        raise KeyError(i)
    except KeyError as k:
        if i % 2:
            raise NOT_FOUND
        raise NOT_FOUND from k


def check(i):
    raise FAILED["exc"]


def step(i):
    n = STATS["n"]
    try:
        lookup(i)
    except NotFound as e:
        x = 0
        for j in range(200):
            x += j
        ctx, cause, tb = e.__context__, e.__cause__, e.__traceback__
        frames = []
        while tb is not None:
            if tb.tb_frame.f_code.co_name == "lookup":
                frames.append(tb.tb_frame.f_locals.get("i"))
            tb = tb.tb_next
        got = (ctx.args[0] if ctx is not None else None,
               cause.args[0] if cause is not None and i % 2 == 0 else None, frames[:1])
        want = (i, None if i % 2 else i, [i])
        if got != want:
            BAD.append((i, got, want))
    try:
        check(i)
    except LookupError:
        pass
    STATS["n"] = n + 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    names = {}
    tb = FAILED["exc"].__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_name
        names[name] = names.get(name, 0) + 1
        tb = tb.tb_next
    if BAD or STATS["n"] != K or names.get("check") != K or names.get("step") != K:
        print("BAD", len(BAD), BAD[:3], STATS["n"], {n: names.get(n) for n in ("check", "step")})
        sys.exit(1)
    print("OK", STATS["n"])


main()
