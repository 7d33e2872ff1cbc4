"""A shared defaultdict(int) whose missing keys C code looks up, in turn:
operator.getitem, "%(k)s" % DD, str.format_map, DD.__getitem__, map over
DD.__getitem__, an itemgetter, sorted with key=DD.__getitem__, and
operator.getitem handed to map, starmap and accumulate with DD nested in
their arguments (also in a shared list holding it) -- each insert
call also bumps COUNT; every fourth one first becomes inevitable (os.getpid,
unknown library code), so its lookup runs in place. Audit calls check
len(DD) - 1 == COUNT and bump DD["hits"].

Serial invariant: every inserter adds exactly one distinct key and bumps COUNT
in the same call: len(DD) - 1 == COUNT at every audit and at the end.
Attacks: defaultdict.__missing__ run by C code, not by the subscript barrier:
optimistically on the live dict (inserts seen before commit, kept on abort),
into a section's copy not published (no write recorded), or in place by an
inevitable section without a version (an optimistic section's copy then
published over it, dropping the key). Red-team rounds 19 and 20 (C functions
that read their operands, handed to library code, now go through the call
barrier for each call).
"""
import itertools
import operator
import os
import sys
from collections import defaultdict
import transaction

DD = defaultdict(int)
DD["hits"] = 0
COUNT = {"n": 0}
BAD = []
FORMS = ("getitem", "percent", "format_map", "dunder", "map", "itemgetter", "sorted",
         "map_getitem", "starmap", "accumulate", "map_shared_list")
DDS = [DD]


def insert(i):
    key = "k%d" % i
    if i % 4 == 1:
        os.getpid()
    form = FORMS[(i // 3) % len(FORMS)]
    if form == "getitem":
        operator.getitem(DD, key)
    elif form == "percent":
        "%%(%s)s" % key % DD
    elif form == "format_map":
        ("{%s}" % key).format_map(DD)
    elif form == "dunder":
        DD.__getitem__(key)
    elif form == "map":
        list(map(DD.__getitem__, [key]))
    elif form == "itemgetter":
        operator.itemgetter(key)(DD)
    elif form == "sorted":
        sorted([key, "hits"], key=DD.__getitem__)
    elif form == "map_getitem":
        list(map(operator.getitem, [DD], [key]))
    elif form == "starmap":
        list(itertools.starmap(operator.getitem, [(DD, key)]))
    elif form == "accumulate":
        list(itertools.accumulate([DD, key], operator.getitem))
    else:
        list(map(operator.getitem, DDS, [key]))
    COUNT["n"] += 1


def audit(i):
    if len(DD) - 1 != COUNT["n"]:
        BAD.append((i, len(DD) - 1, COUNT["n"]))
    DD["hits"] += 1


def main():
    n = 840
    for i in range(n):
        transaction.add(insert if i % 3 else audit, i)
    transaction.run()
    inserts = sum(1 for i in range(n) if i % 3)
    missing = [i for i in range(n) if i % 3 and "k%d" % i not in DD]
    if BAD or missing or COUNT["n"] != inserts or len(DD) - 1 != inserts:
        print("BAD", len(BAD), BAD[:3], missing[:5], COUNT, len(DD))
        sys.exit(1)
    print("OK", len(DD))


main()
