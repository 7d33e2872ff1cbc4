"""Application operators that return shared lists: ``TREE / "a"``, ``~TREE``, ``TREE < "b"``, ``abs(TREE)``.

A token moves between two shared lists reached through a path-like object
whose operators return the lists themselves (as pathlib-like or query DSLs
do). Readers bind the lists to locals through those operators and test
``a or b``; others compare two lists a writer keeps equal (``x == y``).
Serial invariant: exactly one list holds the token (``a or b`` is true, and
``len(a) + len(b) == 1``); the two mirrored lists are always equal.
Attacks: the rewriter's value analysis took the result of any operator (and
of ``abs``/``round``/``pow``) for an atom, so the locals' truth tests and
``==`` ran without barriers: readers saw the token in neither list, and
mirrored lists unequal (red-team round 30).
"""
import transaction


class Tree:
    def __init__(self):
        self.kids = {"a": ["tok"], "b": [], "x": [0] * 50, "y": [0] * 50}

    def __truediv__(self, k):
        return self.kids[k]

    def __invert__(self):
        return self.kids["a"]

    def __lt__(self, k):
        return self.kids[k]

    def __abs__(self):
        return self.kids["b"]


TREE = Tree()
BADS = []


def mover(i):
    a = TREE.kids["a"]
    b = TREE.kids["b"]
    if a:
        b.append(a.pop())
    else:
        a.append(b.pop())


def mirror(i):
    new = [i] * 50
    TREE.kids["x"][:] = new
    s = 0
    for j in range(100):
        s += j
    TREE.kids["y"][:] = new


def reader(i):
    form = i % 3
    if form == 0:
        a = TREE / "a"
        b = TREE / "b"
    elif form == 1:
        a = ~TREE
        b = TREE < "b"
    else:
        a = TREE / "a"
        b = abs(TREE)
    if not (a or b):
        BADS.append(("neither", i))
    x = TREE / "x"
    y = TREE / "y"
    if not x == y:
        BADS.append(("unequal", i))


for i in range(3000):
    transaction.add(mover, i)
    transaction.add(reader, i)
    if i % 10 == 0:
        transaction.add(mirror, i)
transaction.run()
print("OK" if not BADS else "BAD", len(BADS), BADS[:5])
