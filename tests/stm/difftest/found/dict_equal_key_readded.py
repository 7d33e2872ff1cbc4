"""A dict key deleted and set again with an equal key of another type keeps the old key.

Found by the ``records`` family (``python -m tests.stm.difftest records 12``:
the key ``1.0`` must become ``True``; 9 of the first 60 seeds are dict ones,
every call, one thread is enough). In an optimistic section,
``v = D.pop(1); D[1.0] = v`` (or ``del D[1]; D[1.0] = v``) leaves the key
``1`` where a serial run has ``1.0``, when the key comes back to the place it
had in the order (it was the last key: re-adding a key that was not the last
moves it to the end, and that publication is right); likewise ``1`` ->
``True``, ``1.0`` -> ``True``, and ``'k'`` -> a ``str`` subclass's ``'k'``.
Keys of an application class with its own ``__eq__``/``__hash__`` (``Rec``)
come out right in a dict (a set loses them: ``set_equal_replace``).

Run: ``python -m tests.stm.difftest.found.dict_equal_key_readded`` (exit 1: differs).
"""

import sys

from tests.stm.difftest.found._compare import compare

SOURCE = '''
class K(str):
    pass


NUMS = {1: 'v'}
BOOLS = {1.0: 'v'}
NAMES = {'k': 1}
DELETED = {1: 'v'}
MOVED = {1: 'v', 2: None}   # 1 moves to the end: published right


def op_pop(i):
    v = NUMS.pop(1)
    NUMS[1.0] = v
    v = BOOLS.pop(1.0)
    BOOLS[True] = v
    v = NAMES.pop('k')
    NAMES[K('k')] = v


def op_del(i):
    del DELETED[1]
    DELETED[1.0] = 'w'
    del MOVED[1]
    MOVED[1.0] = 'w'
'''

if __name__ == "__main__":
    sys.exit(compare(SOURCE, ["op_pop", "op_del"],
                     ["NUMS", "BOOLS", "[type(k).__name__ for k in NAMES]", "DELETED", "MOVED"]))
