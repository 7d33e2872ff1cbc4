"""Hit counters: odd calls let a library helper count, the target handed to it
by an application callback in some form other than a return value
(FORM: gen = an application generator yields it, out = the callback appends it
to the library's list, holder = the callback stores it on the library's object);
even calls count with STATS["hits"] += 1.

Serial invariant: every call adds 1: STATS["hits"] == K.
Attacks: reach.hold_handed_back holds what an application callback RETURNS to
library code run in place; a target handed over by yield, through an argument
list or a library object's attribute is neither held nor versioned.
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "adversarial_lib"))
import rtlib
import transaction

FORM = "out"
STATS = {"hits": 0}
K = 1000


def targets():
    yield STATS


def fill_list(box):
    box.append(STATS)


def fill_holder(h):
    h.target = STATS


def step(i):
    if i % 2:
        if FORM == "gen":
            rtlib.bump_from_gen(targets, "hits")
        elif FORM == "out":
            rtlib.bump_via_out(fill_list, "hits")
        else:
            rtlib.bump_via_holder(fill_holder, "hits")
    else:
        STATS["hits"] += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if STATS["hits"] != K:
        print("BAD", FORM, STATS, K); sys.exit(1)
    print("OK", FORM, STATS)


main()
