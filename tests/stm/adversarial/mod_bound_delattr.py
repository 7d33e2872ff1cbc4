"""A module attribute replaced by delete-then-set: ME.__delattr__("slot"); ME.slot = v.

Serial invariant: between calls ME.slot always exists; readers never raise,
and at the end slot holds some writer's value; total == sum of values read.
Attacks: specials._special_object_delattr calls object.__delattr__ on a module
in place even in an optimistic section (no log, no rollback).
Red-team round 17: AttributeError on every run (fixed as module_type_attrs).
"""
import sys
import transaction

ME = sys.modules[__name__]
slot = 0
N = 600
seen = []


def writer(i):
    ME.__delattr__("slot")
    x = 0
    for k in range(200):
        x += k
    ME.slot = i


def reader(i):
    v = ME.slot
    seen.append(v)


def main():
    for i in range(N):
        transaction.add(writer if i % 2 else reader, i)
    try:
        transaction.run()
    except AttributeError as e:
        import traceback; traceback.print_exc(limit=-3)
        print("BAD raised", repr(e))
        sys.exit(1)
    if not hasattr(ME, "slot"):
        print("BAD slot gone"); sys.exit(1)
    print("OK", len(seen), ME.slot)


main()
