"""A metaclass's ``__setattr__`` runs again when the section's class writes are published.

Found by the ``classes`` family, shape ``metaclass_setattr`` (e.g.
``python -m tests.stm.difftest classes 2``; 10 of seeds 0-99, every call, one
thread is enough). ``Pool.a = 5`` in an optimistic section runs the
metaclass's ``__setattr__`` (instrumented: its own writes are logged), and
the commit then publishes each logged class attribute with
``setattr(cls, name, value)``, which runs the metaclass's ``__setattr__`` a
second time, in place: a metaclass that transforms the value stores it
transformed twice (``Doubling``: 20, not 10), and one that counts writes in
the class counts them again, in publication order (``Counted``: 3, not 2;
the family's program counts 3 writes per move instead of 2).
(Instances are published with ``object.__setattr__``, so an instance's own
``__setattr__`` does not show it.)

Run: ``python -m tests.stm.difftest.found.metaclass_setattr_rerun`` (exit 1: differs).
"""

import sys

from tests.stm.difftest.found._compare import compare

SOURCE = '''
class Doubling(type):
    def __setattr__(cls, name, value):
        super().__setattr__(name, value * 2)


class Pool(metaclass=Doubling):
    a = 1


class Counted(type):
    def __setattr__(cls, name, value):
        type.__setattr__(cls, name, value)
        if name != 'writes':
            type.__setattr__(cls, 'writes', cls.writes + 1)


class Box(metaclass=Counted):
    u = 0
    v = 0
    writes = 0


def op(i):
    Pool.a = 5
    Box.v = 3
    Box.u = 4
'''

if __name__ == "__main__":
    sys.exit(compare(SOURCE, ["op"], ["Pool.a", "(Box.u, Box.v, Box.writes)"]))
