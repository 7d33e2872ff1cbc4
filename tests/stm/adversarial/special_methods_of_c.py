"""Special methods and properties that are C methods of mutable objects: ``__getitem__ = COUNTS.__getitem__``, ``__getattr__ = dict.__getitem__``, ``size = property(len)``.

The interpreter calls them itself (``REG[k]``, ``len(REG)``, ``for k in
REG``, ``CFG.hits``, ``BAG.size``), where no barrier stands, and the C
code reads the live container, past the section's log.
Serial invariants: ``COUNTS["n"]`` counts every call (read through the
facade, written to the dict); iterating the facade while other calls add
keys never raises; ``CFG.hits`` sees the call's own ``CFG["hits"] = ...``
(two increments per call); each call sees ``BAG.size`` after its own
append, so the sizes seen are 1..N, each once.
Attacks: the engine judged the method itself ("pure" C code) and ran it
on the live object (red-team round 33, findings 2 to 4).
"""
import transaction

N = 1500
COUNTS = {"n": 0}


class Registry:
    """A read facade over the module's dict."""
    __getitem__ = COUNTS.__getitem__
    __contains__ = COUNTS.__contains__
    __len__ = COUNTS.__len__
    __iter__ = COUNTS.__iter__


class Config(dict):
    """The attribute-dict idiom."""
    __getattr__ = dict.__getitem__


class Bag(list):
    size = property(len)


REG = Registry()
CFG = Config(hits=0)
BAG = Bag()
SIZES = []
BADS = []


def call(i):
    COUNTS["n"] = REG["n"] + 1
    COUNTS[i] = i
    if i not in REG or len(REG) < 2:
        BADS.append(("own key", i))
    CFG["hits"] = CFG.hits + 1
    CFG["hits"] = CFG.hits + 1
    BAG.append(i)
    SIZES.append(BAG.size)


def reader(i):
    try:
        keys = sum(1 for _ in REG)
        listed = len(list(REG))
    except RuntimeError as exc:
        BADS.append(("iteration", repr(exc)))
        return
    if keys != listed:
        BADS.append(("torn", i))


for i in range(N):
    transaction.add(call, i)
    transaction.add(reader, i)
transaction.run()
if COUNTS["n"] != N:
    BADS.append(("lost updates", COUNTS["n"]))
if CFG["hits"] != 2 * N:
    BADS.append(("own attribute writes", CFG["hits"]))
if sorted(SIZES) != list(range(1, N + 1)):
    BADS.append(("sizes", sorted(SIZES)[:5]))
print("OK" if not BADS else "BAD", len(BADS), BADS[:5])
