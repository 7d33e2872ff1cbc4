"""A class statement inside a section, built from what the section just wrote.

Serial invariant: after the section sets ``config`` and ``decorators``,
the class statement it runs next uses the new values: the decorator just
stored, the base and the class keyword just chosen, and a body that reads
``config["n"] == 5``. One thread suffices.

Attacks: class statements inside a section. The rewriter once left every
class body alone (a module's class bodies run once, at import), so a class
statement in a function read its decorators, bases, keywords and body past
the barriers, and missed the section's buffered writes: the class was
built from the committed state.
"""

import transaction


class Base:
    tag = "base"

    def __init_subclass__(cls, flavor=None):
        cls.flavor = flavor


class Other(Base):
    tag = "other"


def keep(cls):
    return cls


def mark(cls):
    cls.marked = True
    return cls


config = {"n": 0, "base": Base, "flavor": "plain"}
decorators = [keep]
bad = []


def job(i):
    config["n"] = 5
    config["base"] = Other
    config["flavor"] = "spicy"
    decorators[0] = mark

    @decorators[0]
    class Cfg(config["base"], flavor=config["flavor"]):
        n = config["n"]
        doubled = [config["n"] * 2]

    got = (Cfg.n, Cfg.doubled, Cfg.tag, Cfg.flavor, getattr(Cfg, "marked", False))
    if got != (5, [10], "other", "spicy", True):
        bad.append(("class built from stale state", got))


def main():
    transaction.add(job, 0)
    transaction.run()
    print("BAD" if bad else "OK", len(bad), bad)


main()
