"""A plugin registry built with classes made inside calls: each 'make' call
defines a subclass of Base, in turn by a class statement, by type(name,
bases, namespace), with a metaclass among the bases, by types.new_class,
by calling an application metaclass and by calling type(Base); it appends the class to REG and bumps a shared counter
(so calls conflict and retry). 'audit' calls walk Base.__subclasses__(), the
usual plugin-discovery idiom.

Serial invariant: every class made is kept in REG, so Base.__subclasses__()
lists exactly REG's classes, at every audit and at the end.
Attacks: making a class enters it in its bases' C-level subclass lists in
place: other sections saw the classes of attempts in flight, and the classes
of attempts that aborted stayed there (barriers.class_bases now makes such a
section inevitable first, and so does calls.making_a_class for a metaclass
called with three arguments). Red-team round 19 (subclass_ghosts).
"""
import sys
import types
import transaction


class Meta(type):
    pass


class Base:
    pass


class MBase(metaclass=Meta):
    pass


REG = []
STATS = {"n": 0}
BAD = []
FORMS = ("class", "type", "meta", "new_class", "metacall", "typeof")


def make(i):
    n = STATS["n"]
    form = FORMS[i % len(FORMS)]
    if form == "class":
        class P(Base):
            tag = i
    elif form == "type":
        P = type("P%d" % i, (Base,), {"tag": i})
    elif form == "meta":
        class P(Base, MBase):
            tag = i
    elif form == "new_class":
        P = types.new_class("P%d" % i, (Base,), exec_body=lambda ns: ns.update(tag=i))
    elif form == "metacall":
        P = Meta("P%d" % i, (Base,), {"tag": i})
    else:
        P = type(Base)("P%d" % i, (Base,), {"tag": i})
    x = 0
    for j in range(200):
        x += j
    STATS["n"] = n + 1
    REG.append(P)


def audit(i):
    subs = Base.__subclasses__()
    if len(subs) != len(REG):
        BAD.append((i, len(subs), len(REG)))


def main():
    for i in range(300):
        transaction.add(audit if i % 5 == 0 else make, i)
    transaction.run()
    tags = sorted(c.tag for c in Base.__subclasses__())
    if BAD or tags != sorted(c.tag for c in REG) or STATS["n"] != len(REG):
        print("BAD", len(BAD), BAD[:3], len(tags), len(REG))
        sys.exit(1)
    print("OK", len(REG))


main()
