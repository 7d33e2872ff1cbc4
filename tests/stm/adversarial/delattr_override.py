"""A class whose ``__delattr__`` override records every deletion.

Serial invariant: every ``del obj.token`` runs ``Slot.__delattr__``, so
``LOG`` ends with one entry per deletion (K), and the tokens are gone.

Attacks: the attribute barrier classifies a write by the class's
``__setattr__`` only; a ``del`` on a class that overrides ``__delattr__``
(but not ``__setattr__``) must still run the override.
"""

import transaction

K = 100
LOG = []


class Slot:
    def __delattr__(self, name):
        LOG.append(name)
        super().__delattr__(name)


slots = []
for _t in range(K):
    _s = Slot()
    _s.token = _t
    slots.append(_s)


def drop(i):
    del slots[i].token


def main():
    for i in range(K):
        transaction.add(drop, i)
    transaction.run()
    left = sum(hasattr(s, "token") for s in slots)
    print("BAD" if (len(LOG), left) != (K, 0) else "OK", "log", len(LOG), "left", left)


main()
