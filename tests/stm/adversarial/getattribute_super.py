"""A class whose ``__getattribute__`` delegates to ``object.__getattribute__``.

Serial invariant: plain Python prints ``OK 5``: the override returns what
``object.__getattribute__`` finds.

Attacks: the rewriter/call barrier on ``object.__getattribute__(self, name)``
inside an instrumented ``__getattribute__``.
"""

import transaction


class P:
    def __init__(self):
        self.x = 5

    def __getattribute__(self, name):
        return super().__getattribute__(name)


p = P()
out = []


def read(i):
    out.append(p.x)


transaction.add(read, 0)
transaction.run()
print("OK" if out == [5] else "BAD", *out)
