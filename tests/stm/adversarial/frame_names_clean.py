"""What a function's own names look like from inside it: ``locals()``,
``vars()``, ``dir()``, ``"{n}".format(**locals())``, ``eval("n + 1")``, a
caller's ``sys._getframe(1).f_locals`` (the tiny-template idiom), with a
variable a nested function assigns (``nonlocal``) and ``+=`` on locals;
and the attributes of classes made in the call, an Enum among them, whose
bodies use ``+=``. Every call also bumps a shared counter.

Serial invariant: plain Python's names and values: locals() holds exactly
the function's variables, with their values; the class bodies leave only
their own attributes (the Enum exactly its members LOW and HIGH).
Attacks: the rewriter's own locals (``_stm_tx``, temporaries), a nonlocal's
Box standing for its value, temporaries left as class attributes (an Enum
member named ``_stm_t1``). Red-team round 19 (locals_leak, locals_box,
locals_box_format, frame_locals_render, classbody_temps, enum_body_temps).
"""
import enum
import json
import sys
import transaction

STATS = {"n": 0}
BAD = []


def render(template):
    return template.format(**sys._getframe(1).f_locals)


def record(name, qty):
    total = qty * 2
    total += 1
    return dict(locals())


def outer(k):
    n = k

    def inc():
        nonlocal n
        n += 1
    inc()
    found = sorted(locals()), sorted(vars()), sorted(dir())
    text = "{n}|%(n)s" .format(**locals()) % locals()
    return found, text, eval("n + 1"), render("n={n}")


def classes(i):
    class Cfg:
        total = 0
        total += i
        for k in range(2):
            total += k

    class Level(enum.IntEnum):
        _ignore_ = ["step"]
        step = 10
        LOW = step
        step += 10
        HIGH = step
    return (sorted(n for n in vars(Cfg) if not n.startswith("__")), Cfg.total,
            [m.name for m in Level], Level(20).name)


def step(i):
    STATS["n"] += 1
    got = (json.dumps(record("a", i)), outer(i), classes(i))
    want = (json.dumps({"name": "a", "qty": i, "total": 2 * i + 1}),
            ((["inc", "k", "n"], ["inc", "k", "n"], ["inc", "k", "n"]),
             "%d|%d" % (i + 1, i + 1), i + 2, "n=%d" % (i + 1)),
            (["k", "total"], i + 1, ["LOW", "HIGH"], "HIGH"))
    if got != want:
        BAD.append((i, got, want))


def main():
    for i in range(100):
        transaction.add(step, i)
    transaction.run()
    if BAD or STATS["n"] != 100:
        print("BAD", len(BAD), BAD[:1])
        sys.exit(1)
    print("OK", STATS["n"])


main()
