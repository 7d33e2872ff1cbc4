"""Two calls load application modules on first use through library functions; their bodies count into a shared dict while other calls count too.

Serial invariant: COUNTS["n"] == 3000 + 5000 + 5000: each call runs alone,
a module's body inside the call that first loads it.

Attacks: a module body is plain code; loaded by ``importlib.import_module``
(or ``__import__``, ``importlib.reload``) or by ``pickle.loads`` of one of
its classes, inside an optimistic section, its writes went in place and a
concurrent section's commit overwrote them all (red-team round 39, finding
1). The instrumenting loader now runs an application module's body alone
(``barriers.plain_code_starts``), however the import was asked for.
"""
import importlib
import pickle

import transaction

from appstate import registry

#: pickle.dumps(appstate.pickled.Thing(), protocol=4), made in another process
PICKLED = b'\x80\x04\x95!\x00\x00\x00\x00\x00\x00\x00\x8c\x10appstate.pickled\x94\x8c\x05Thing\x94\x93\x94)\x81\x94.'


def bump():
    registry.COUNTS["n"] += 1


def load_by_name():
    importlib.import_module("appstate.plugin")


def load_by_unpickling():
    pickle.loads(PICKLED)


def main():
    for _ in range(1000):
        transaction.add(bump)
    transaction.add(load_by_name)
    for _ in range(1000):
        transaction.add(bump)
    transaction.add(load_by_unpickling)
    for _ in range(1000):
        transaction.add(bump)
    transaction.run()
    if registry.COUNTS["n"] == 13000:
        print("OK", registry.COUNTS)
    else:
        print("BAD", registry.COUNTS)


main()
