"""Hit counters: odd calls let a library helper count, the target handed to it
by application code in a form other than a callback's return value, in turn:
an application generator yields it, a callback appends it to the library's
list, a callback stores it on the library's object; even calls count with
STATS["hits"] += 1.

Serial invariant: every call adds 1: STATS["hits"] == K.
Attacks: library code run in place by an inevitable section changing what it
got from application code (reach.hold_handed_back held only a callback's
return value: a target handed over by yield, through an argument list or a
library object's attribute was neither held nor versioned).
Red-team round 17 (handback_out, handback_holder, handback_gen).
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
import rtlib
import transaction

FORMS = ("gen", "out", "holder")
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
        form = FORMS[(i // 2) % len(FORMS)]
        if form == "gen":
            rtlib.bump_from_gen(targets, "hits")
        elif form == "out":
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
        print("BAD", STATS, K); sys.exit(1)
    print("OK", STATS)


main()
