"""A user non-data descriptor that caches its value in the instance with setattr.

Serial invariant (plain Python): once ``setattr(obj, name, v)`` has stored
the value, the instance attribute shadows the non-data descriptor, so
``__get__`` runs once per object: after K reads (two per call, the first and second in one call), ``COMPUTED["n"] == 1``.

Attacks: as ``nondata_default``: the instance value a lazy descriptor stored
was read live, so two calls both computed it.
"""
import transaction

COMPUTED = {"n": 0}


class Lazy:
    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        COMPUTED["n"] += 1
        setattr(obj, self.name, 42)
        return 42


class Item:
    double = Lazy()


IT = Item()


def step(i):
    return IT.double + IT.double


def main():
    for i in range(10):
        transaction.add(step, i)
    transaction.run()
    print("OK" if COMPUTED["n"] == 1 else "BAD", COMPUTED["n"], vars(IT))


main()
