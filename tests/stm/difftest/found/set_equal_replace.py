"""A shared set's element replaced by an equal but distinct object is lost.

Found by the ``records`` family (e.g. ``python -m tests.stm.difftest records 2``,
every call; 23 of seeds 0-59, one thread is enough). In an optimistic
section, ``S.discard(old); S.add(new)`` where ``new == old`` (same hash) but
``new is not old`` leaves ``old`` in the set after the commit: a record kept
in a set by its id loses its update, a number keeps its type (``1`` stays
``1`` after ``S.discard(1); S.add(1.0)``). Every mutator shows it (``remove``,
``update``, ``-=``/``|=``, ``^=``, ``difference_update``, ``clear`` then
``update``); rebinding a global to a new set (``S = S - {old} | {new}``) and
frozensets do not, nor does a section that turned inevitable first
(``type(x).__name__`` read on the way did, which hid it at first).

Run: ``python -m tests.stm.difftest.found.set_equal_replace`` (exit 1: differs).
"""

import sys

from tests.stm.difftest.found._compare import compare

SOURCE = '''
class Rec:
    def __init__(self, ident, payload):
        self.ident = ident
        self.payload = payload

    def __eq__(self, other):
        return isinstance(other, Rec) and self.ident == other.ident

    def __hash__(self):
        return hash(self.ident)

    def __repr__(self):
        return 'Rec(%r, %r)' % (self.ident, self.payload)


RECS = {Rec(1, 'old'), Rec(2, 'x')}
NUMS = {1, 2}


def op_replace(i):
    RECS.discard(Rec(1, None))
    RECS.add(Rec(1, 'new'))


def op_retype(i):
    NUMS.discard(1)
    NUMS.add(1.0)
'''

if __name__ == "__main__":
    sys.exit(compare(SOURCE, ["op_replace", "op_retype"],
                     ["sorted(RECS, key=lambda r: r.ident)", "sorted(NUMS, key=repr)"]))
