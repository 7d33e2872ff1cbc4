"""Pure builtins whose RESULT is an iterator or a view although they are not lazy
themselves: max/min picking one of several dict views / iterators out of a
generator, with a key function that counts its calls. Sharded store: SHARDS is a
list of dicts; a 'rebalance' section moves one key from the biggest shard (found
with max over a generator of items views) to the smallest.
Serial invariant: no section raises; total keys stay 60; the key function is
called exactly once per candidate (KEYCALLS == 3 per section).
Attacks: calls.call_reading calls a non-lazy pure callable again (on read shadows)
when its result is an iterator or a view: the first call used the generator up
(max() iterable argument is empty), and the key function ran twice per item.
"""
import sys
import transaction

SHARDS = [{"k%d" % j: j for j in range(s * 20, s * 20 + 20)} for s in range(3)]
KEYCALLS = {"n": 0}
ERRS = []


def size_of(view):
    KEYCALLS["n"] += 1
    return len(view)


def rebalance(i):
    try:
        biggest = max((s.items() for s in SHARDS), key=size_of)
        smallest = min(SHARDS, key=len)
    except ValueError as e:
        ERRS.append((i, str(e)))
        return
    k, v = next(iter(biggest))
    for s in SHARDS:
        if k in s:
            del s[k]
    smallest[k] = v


def main():
    for i in range(300):
        transaction.add(rebalance, i)
    transaction.run()
    total = sum(len(s) for s in SHARDS)
    ok = not ERRS and total == 60 and KEYCALLS["n"] == 900
    print("OK" if ok else "BAD", total, [len(s) for s in SHARDS], KEYCALLS, len(ERRS), ERRS[:2])
    return 0 if ok else 1


sys.exit(main())
