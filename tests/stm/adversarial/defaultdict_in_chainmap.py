"""A shared defaultdict(int) inside a ChainMap (a module global); calls format
a missing key through the ChainMap (``"{k}".format_map(CM)``, ``"%(k)s" % CM``),
which inserts it into the defaultdict, and bump COUNT; audits compare.

Serial invariant: every inserter adds one key and bumps COUNT in the same
call: len(DD) - 1 == COUNT at every audit and at the end.
Red-team round 20 (dd_cmissing2 FORM=chainmap_global_fmt/pct): ChainMap's
library __getitem__ looks the key up in the live defaultdict, whose C
__missing__ inserts it in place (an uncommitted insert seen, a key lost when
another section publishes its copy; RuntimeError from a concurrent len()).
Attacks: library mappings (ChainMap) holding a shared defaultdict, read by
C formatting (format_map, %) -- calls.shared_defaultdicts_behind.
"""
import collections
import sys
import transaction

DD = collections.defaultdict(int)
DD["hits"] = 0
COUNT = {"n": 0}
CM = collections.ChainMap({}, DD)
BAD = []


def insert(i):
    key = "k%d" % i
    if i % 2:
        ("{%s}" % key).format_map(CM)
    else:
        "%%(%s)s" % key % CM
    x = 0
    for j in range(100):
        x += j
    COUNT["n"] += 1


def audit(i):
    if len(DD) - 1 != COUNT["n"]:
        BAD.append((i, len(DD) - 1, COUNT["n"]))
    DD["hits"] += 1


def main():
    n = 600
    for i in range(n):
        transaction.add(insert if i % 3 else audit, i)
    transaction.run()
    inserts = sum(1 for i in range(n) if i % 3)
    if BAD or len(DD) - 1 != inserts or COUNT["n"] != inserts:
        print("BAD", len(BAD), BAD[:3], len(DD) - 1, COUNT["n"], inserts)
        sys.exit(1)
    print("OK", len(DD))


main()
