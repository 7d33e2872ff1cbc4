"""Shared objects whose __del__ raises SystemExit, KeyboardInterrupt or GeneratorExit, dropped by calls.

Fifty objects made by the script sit in a shared dict; each call deletes one.
The last reference goes when the call commits, so the finalizer is put off
to the end of the section and run by the engine's deferred-finalizer loop.
Serial invariant: as in plain Python, an exception raised by a finalizer is
reported ("Exception ignored in") and never propagates: every call runs,
50 reports, the script reaches its last line.
Attacks: the deferred-finalizer loop caught Exception only, so a SystemExit
from a __del__ ended the whole script inside transaction.run() (on the
serial backend too), and a KeyboardInterrupt stopped the run.
"""
import io
import sys

import transaction

captured = io.StringIO()
real_stderr = sys.stderr
sys.stderr = captured


class Boom:
    def __init__(self, i):
        self.i = i

    def __del__(self):
        raise (SystemExit, KeyboardInterrupt, GeneratorExit)[self.i % 3](f"boom {self.i}")


SHARED = {i: Boom(i) for i in range(50)}
DONE = []


def drop(i):
    del SHARED[i]
    DONE.append(i)


for i in range(50):
    transaction.add(drop, i)
transaction.run()
sys.stderr = real_stderr
reports = captured.getvalue().count("Exception ignored in")
ok = sorted(DONE) == list(range(50)) and reports == 50 and not SHARED
print("OK" if ok else "BAD", len(DONE), "calls ran,", reports, "reports")
