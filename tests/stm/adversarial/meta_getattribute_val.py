"""A metaclass __getattribute__ that transforms what a class attribute reads.

Serial invariant: Meta.__getattribute__ answers Cfg.price as the stored
cents divided by 100. Each call reads p = Cfg.price and stores (p+1)*100
cents, so the values read are exactly 0..K-1 (some order) and the final
Cfg.price == K.

Attacks: a class object's attributes were read along its MRO, as a
metaclass without ``__getattribute__`` reads them, so the cents were seen
raw (a value 100 times too big, stored and read again: an OverflowError).
Now a metaclass with a ``__getattribute__`` of its own makes the read
inevitable, and the metaclass's code runs as Python runs it.
"""
import transaction

K = 400


class Meta(type):
    def __getattribute__(cls, name):
        v = type.__getattribute__(cls, name)
        if name == "price":
            return v / 100
        return v


class Cfg(metaclass=Meta):
    price = 0


seen = []


def step(i):
    p = Cfg.price           # serial: stored / 100
    seen.append(p)
    Cfg.price = (p + 1) * 100


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    ok = sorted(seen) == list(range(K)) and Cfg.price == K
    print("OK" if ok else "BAD", sorted(seen)[-3:], Cfg.price)


main()
