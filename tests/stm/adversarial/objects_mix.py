"""Application objects in many shapes, each keeping an invariant.

Serial invariants (kept by every call):

* the balances of ``accounts``, read and written through a property whose
  setter may raise ``ValueError`` mid-transfer, total 600;
* ``wallet[0].v + wallet[1].v == 0``, changed with ``+=`` through ``__iadd__``;
* ``slot.a + slot.b == 100`` on a ``__slots__`` object, also when an
  exception is raised and caught half-way through an update;
* the counters ``lazy.c_*``, read through a ``__getattr__`` default, sum to
  the ``global`` count of calls that bumped them;
* ``Account.opened``, a class attribute written through ``type(self)``,
  counts the accounts that exist; a closure counter changed with
  ``nonlocal`` and a ``global`` counter count their calls; a recursive call
  undoes its own changes on the way out.

Attacks: attribute barriers on every kind of attribute (properties,
descriptors of ``__slots__``, ``__getattr__`` fallbacks, class attributes),
``Box`` cells of ``nonlocal`` locals, ``global`` statements, in-place
operators returning ``self``, and writes kept when an exception is raised
after them.
"""

import transaction

N = 6
K = 900


class Money:
    def __init__(self, v):
        self.v = v

    def __iadd__(self, k):
        self.v += k
        return self


class Slot:
    __slots__ = ("a", "b")

    def __init__(self):
        self.a = 50
        self.b = 50


class Lazy:
    def __getattr__(self, name):
        if name.startswith("c_"):
            return 0
        raise AttributeError(name)


class Account:
    opened = 0

    def __init__(self, balance):
        self._balance = balance
        type(self).opened += 1

    @property
    def bal(self):
        return self._balance

    @bal.setter
    def bal(self, value):
        if value < 0:
            raise ValueError("overdraft")
        self._balance = value


accounts = [Account(100) for _ in range(N)]
wallet = [Money(0), Money(0)]
slot = Slot()
lazy = Lazy()
transfers = 0
lazy_calls = 0


def make_counter():
    n = 0

    def bump():
        nonlocal n
        n += 1
        return n

    def get():
        return n

    return bump, get


bump, bumped = make_counter()
bad = []


def spin():
    x = 0
    for j in range(60):
        x += j
    return x


def transfer(i):
    global transfers
    a, b = accounts[i % N], accounts[(i * 7 + 1) % N]
    amount = i % 150
    try:
        a.bal -= amount        # may raise before anything was written
        spin()
        b.bal += amount
    except ValueError:
        pass
    transfers += 1


def move_money(i):
    wallet[0] += 5
    spin()
    wallet[1] += -5


def move_slot(i):
    slot.a -= 3
    spin()
    slot.b += 3


def bump_lazy(i):
    global lazy_calls
    name = f"c_{i % 4}"
    setattr(lazy, name, getattr(lazy, name) + 1)
    lazy_calls += 1


def bump_closure(i):
    bump()
    spin()


def recurse(i, depth=4):
    if depth == 0:
        return 0
    account = accounts[depth % N]
    account.bal += 1
    below = recurse(i, depth - 1)
    account.bal -= 1
    return below + 1


def open_temporary(i):
    Account(0)                 # opened += 1 through type(self)...
    Account.opened -= 1        # ...and closed again


def raise_midway(i):
    try:
        slot.a -= 10
        if i % 2:
            raise KeyError("boom")
        slot.b += 10
    except KeyError:
        slot.b += 10
    finally:
        spin()


def audit(i):
    total = sum(a.bal for a in accounts)
    if total != 100 * N:
        bad.append(("accounts", total))
    if wallet[0].v + wallet[1].v != 0:
        bad.append(("wallet", wallet[0].v, wallet[1].v))
    if slot.a + slot.b != 100:
        bad.append(("slot", slot.a, slot.b))
    if Account.opened != N:
        bad.append(("opened", Account.opened))
    counted = sum(getattr(lazy, f"c_{k}") for k in range(4))
    if counted != lazy_calls:
        bad.append(("lazy", counted, lazy_calls))


CALLS = [transfer, move_money, move_slot, bump_lazy, bump_closure, recurse, open_temporary,
         raise_midway, audit]


def main():
    for i in range(K):
        transaction.add(CALLS[i % len(CALLS)], i)
    transaction.run()
    audit(0)
    if bumped() != K // len(CALLS):
        bad.append(("closure", bumped()))
    if transfers != K // len(CALLS):
        bad.append(("transfers", transfers))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
