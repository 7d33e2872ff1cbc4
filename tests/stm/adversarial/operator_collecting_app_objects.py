"""Application operators ``+ - | %`` (and their reflected forms) with a string or number operand, returning shared lists.

A token moves between two shared lists reached through ``TREE + "a"``,
``"a" + TREE``, ``TREE - 0``, ``TREE | "a"``, ``0 % TREE`` and ``a += TREE``;
readers test ``a or b``.
Serial invariant: exactly one list holds the token, so ``a or b`` is true.
Attacks: the value analysis took a concatenating operator with a number or
string operand for a TypeError-or-value ("a number or string with anything
else"), and ``number % x`` for formatting, so the locals' truth tests ran
without barriers when the other operand was an application object
(red-team round 31).
"""
import transaction


class Tree:
    def __init__(self):
        self.kids = {"a": ["tok"], "b": []}

    def __add__(self, k):
        return self.kids[k]

    def __radd__(self, k):
        return self.kids[k]

    def __sub__(self, k):
        return self.kids["ab"[k]]

    def __or__(self, k):
        return self.kids[k]

    def __rmod__(self, k):
        return self.kids["ab"[k]]


TREE = Tree()
BADS = []


def mover(i):
    a = TREE.kids["a"]
    b = TREE.kids["b"]
    if a:
        b.append(a.pop())
    else:
        a.append(b.pop())


def reader(i):
    form = i % 6
    if form == 0:
        a = TREE + "a"
        b = TREE + "b"
    elif form == 1:
        a = "a" + TREE
        b = "b" + TREE
    elif form == 2:
        a = TREE - 0
        b = TREE - 1
    elif form == 3:
        a = TREE | "a"
        b = TREE | "b"
    elif form == 4:
        a = 0 % TREE
        b = 1 % TREE
    else:
        a = "a"
        a += TREE
        b = "b"
        b += TREE
    if not (a or b):
        BADS.append((form, i))


for i in range(6000):
    transaction.add(mover, i)
    transaction.add(reader, i)
transaction.run()
print("OK" if not BADS else "BAD", len(BADS), BADS[:5])
