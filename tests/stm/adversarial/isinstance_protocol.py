"""Items become ``Priced`` (a ``runtime_checkable`` Protocol) when a section
gives them a ``price``; the same section then checks ``isinstance``.

Serial invariant: a call sets ``item.price`` on an item that had none and
immediately asks ``isinstance(item, Priced)``: True, since the item now has
the attribute; it also counts the priced items in ``priced``. At the end
``priced`` equals the number of items with a price, and no check failed.

Attacks: ``isinstance`` is called directly (a scalar builtin), and a
runtime-checkable protocol's ``__instancecheck__`` (plain Python in
``typing``) probes the protocol's members with ``hasattr`` on the live
object: it misses the section's own buffered attribute write.
"""
import typing
import transaction


@typing.runtime_checkable
class Priced(typing.Protocol):
    price: int


class Item:
    def __init__(self, k):
        self.k = k


ITEMS = [Item(k) for k in range(300)]
priced = 0
bad = []


def step(i):
    global priced
    item = ITEMS[i]
    item.price = i + 1
    priced += 1
    if not isinstance(item, Priced):
        bad.append(i)


def main():
    for i in range(len(ITEMS)):
        transaction.add(step, i)
    transaction.run()
    have = sum(1 for it in ITEMS if hasattr(it, "price"))
    if bad or have != priced:
        print("BAD isinstance missed own write", len(bad), "of", len(ITEMS), "priced", priced, have)
    else:
        print("OK", priced)


main()
