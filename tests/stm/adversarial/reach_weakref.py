"""A counter on an application object; odd calls let a library helper bump it
through a weak reference ($FORM=proxy: rtlib.bump_attr(weakref.proxy(OBJ), "hits");
FORM=ref: rtlib.bump_attr_via_ref(weakref.ref(OBJ), "hits")); even calls do OBJ.hits += 1.

Serial invariant: every call adds 1: OBJ.hits == K.
Attacks: reach.reached_state does not look through a weakref.proxy / weakref.ref
argument (neither a container, nor a heap-type instance), so the library's
in-place write holds no stripe and bumps no version.
Red-team round 17: BAD 3/3 on 2 threads. reach follows a weakref.ref (and a
WeakValueDictionary's KeyedRef) to its referent.
"""
import os
import sys
import weakref
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adversarial_lib"))
import rtlib
import transaction

FORM = "ref"


class Obj:
    def __init__(self):
        self.hits = 0


OBJ = Obj()
PROXY = weakref.proxy(OBJ)
REF = weakref.ref(OBJ)
K = 1000


def step(i):
    if i % 2:
        if FORM == "proxy":
            rtlib.bump_attr(PROXY, "hits")
        else:
            rtlib.bump_attr_via_ref(REF, "hits")
    else:
        OBJ.hits += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if OBJ.hits != K:
        print("BAD", FORM, OBJ.hits, K); sys.exit(1)
    print("OK", FORM, OBJ.hits)


main()
