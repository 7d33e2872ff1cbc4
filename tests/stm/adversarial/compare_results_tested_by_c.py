"""Application comparisons returning shared lists, tested by the interpreter or C code itself.

A token moves between two shared lists; ``TREE.__lt__``/``__eq__`` return
them. Readers test them where no barrier can stand: the middle of a chained
comparison (``TREE < "a" < "~"``), a ``match`` value pattern (``case "a":``
compares with ``==``), ``"a" in (TREE,)`` and ``[TREE].count("a")`` (C
compares the items and tests each result's truth).
Serial invariant: exactly one list holds the token.
Attacks: the caller's barriers cannot reach a truth test the interpreter
or C code makes; what an application's rich comparison method returns now
goes through ``barriers.compared`` (a shared container makes the section
inevitable first). Broke in ~900 of 6000 readers on 4 threads before
(red-team round 31, finding 3).
"""
import transaction


class Tree:
    def __init__(self):
        self.kids = {"a": ["tok"], "b": []}

    def __lt__(self, k):
        return self.kids[k]

    def __eq__(self, k):
        return self.kids[k]

    __hash__ = object.__hash__


TREE = Tree()
BADS = []


def mover(i):
    a = TREE.kids["a"]
    b = TREE.kids["b"]
    if a:
        b.append(a.pop())
    else:
        a.append(b.pop())


def held(k, form):
    if form == 0:
        return bool(TREE < k < "~")
    if form == 1:
        match TREE:
            case "a" if k == "a":
                return True
            case "b" if k == "b":
                return True
        return False
    if form == 2:
        return k in (TREE,)
    return [TREE].count(k) == 1


def reader(i):
    form = i % 4
    if held("a", form) + held("b", form) != 1:
        BADS.append((form, i))


for i in range(6000):
    transaction.add(mover, i)
    transaction.add(reader, i)
transaction.run()
print("OK" if not BADS else "BAD", len(BADS), BADS[:5])
