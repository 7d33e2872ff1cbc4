"""Deep recursion after raising the recursion limit, as a tree walk might: a
function calling its own name, a method calling itself through ``self``, a
classmethod through ``cls``.

Serial invariant: with ``sys.setrecursionlimit(30000)``, ``walk(8000)``
returns 8001, ``Walker().visit(chain of 8000)`` 8000 and ``Walker.depth(7000)``
7000 (plain Python frames need no C stack in 3.11+).
Attacks: every instrumented call went through the C call barrier, a C frame
each, so deep recursion hit the C recursion limit near depth 4000 (a
RecursionError no serial run raises). A function's call of its own name, or
a method's of ``self.name``, now gets the function from
barriers.recursive_callee and calls it from its own frame. Red-team round 13.
"""
import sys
import transaction

sys.setrecursionlimit(30000)
DEPTH = 8000
TOTAL = {"t": 0}
NODE = {"v": 1}


def walk(n):
    if n == 0:
        return NODE["v"]
    return 1 + walk(n - 1)


class Node:
    def __init__(self, child):
        self.child = child


class Walker:
    def visit(self, node):
        return 0 if node is None else 1 + self.visit(node.child)

    @classmethod
    def depth(cls, n):
        return 0 if n == 0 else 1 + cls.depth(n - 1)


HEAD = None
for _ in range(DEPTH):
    HEAD = Node(HEAD)


def step(i):
    TOTAL["t"] += walk(DEPTH) + Walker().visit(HEAD) + Walker.depth(7000)


def main():
    for i in range(6):
        transaction.add(step, i)
    transaction.run()
    want = 6 * (DEPTH + 1 + DEPTH + 7000)
    if TOTAL["t"] != want:
        print("BAD", TOTAL, want)
        sys.exit(1)
    print("OK", TOTAL)


main()
