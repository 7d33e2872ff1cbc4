"""A module attribute replaced by delete-then-set: object.__delattr__(ME, "slot"); ME.slot = v.

Serial invariant: between calls ME.slot always exists; readers never raise,
and at the end slot holds some writer's value; total == sum of values read.
Attacks: specials._special_object_delattr calls object.__delattr__ on a module
in place even in an optimistic section (no log, no rollback).
Red-team round 17: AttributeError 2/3 on 2 threads; object.__delattr__ on
a module now goes through the del_attr barrier, as object.__setattr__ did.
"""
import sys
import transaction

ME = sys.modules[__name__]
slot = 0
N = 600
seen = []


def writer(i):
    object.__delattr__(ME, "slot")
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
