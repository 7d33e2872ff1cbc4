"""A dict view and a generator over a shared list, made in one call and kept in a global,
read by a later call after other calls changed the containers.

Serial invariant (plain Python too): a view and a generator read the live
containers, so the later call sees the new values: sum 5 and [5].

Attacks: lazy objects made over the section's private copy (one consistent
state for the section) that outlive it. They read the copy for ever: the
later call saw sum 0 and [0] (fifth round, every run). A section whose copy
is still referenced at commit now runs again inevitably.
"""
import transaction

cfg = {"a": 0}
items = [0, 0]
kept = {}
seen = {}


def make(_):
    kept["values"] = cfg.values()
    g = (x for x in items)
    next(g)
    kept["gen"] = g


def change(_):
    cfg["a"] = 5
    items[1] = 5


def use(_):
    seen["values"] = sum(kept["values"])
    seen["gen"] = list(kept["gen"])


def main():
    transaction.add(make, 0)
    transaction.run()
    transaction.add(change, 0)
    transaction.run()
    transaction.add(use, 0)
    transaction.run()
    print("OK" if seen == {"values": 5, "gen": [5]} else "BAD %r (want values 5, gen [5])" % seen)


main()
