"""Library context managers made at import, entered by some calls.

Serial invariant: a call entering ``REDIRECTS[i]`` prints its number into
its own StringIO and nothing else does; a call entering ``PATCH``
(``mock.patch.object(Cfg, "rate", 5)``) sees Cfg.rate == 5 inside the
block, every other call sees 1; after run() sys.stdout is the real one
again and Cfg.rate == 1.
Attacks: a ``with`` whose ``__enter__`` is library code run in place by an
optimistic section (the manager was made before the section, so no call
made it inevitable): process-wide effects leaked between overlapping
sections, and the patch's class write was not versioned.
"""
import contextlib
import io
import sys
import unittest.mock

import transaction

K = 600
REAL = sys.stdout


class Cfg:
    rate = 1


BUFFERS = [io.StringIO() for _ in range(K)]
REDIRECTS = [contextlib.redirect_stdout(b) for b in BUFFERS]
PATCH = unittest.mock.patch.object(Cfg, "rate", 5)
bad = []


def step(i):
    if i % 4 == 0:
        with PATCH:
            for _ in range(200):
                pass
            seen = Cfg.rate
        if seen != 5:
            bad.append(("patched", i, seen))
        return
    if i % 4 == 1:
        with REDIRECTS[i]:
            for _ in range(200):
                pass
            print(i)
        if BUFFERS[i].getvalue() != "%d\n" % i:
            bad.append(("redirected", i, BUFFERS[i].getvalue()))
    seen = Cfg.rate
    for _ in range(200):
        pass
    if seen != 1:
        bad.append(("plain", i, seen))


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    restored = sys.stdout is REAL
    sys.stdout = REAL
    ok = not bad and restored and Cfg.rate == 1
    print("OK" if ok else "BAD", len(bad), bad[:3], restored, Cfg.rate)


main()
