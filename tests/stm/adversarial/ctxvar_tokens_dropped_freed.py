"""Phase 1: 400 calls each do TOKS.append(V.set(payload_i)) (a fresh 250 KB bytearray each), so
the application holds 400 tokens, each holding the payload it replaced (~100 MB, as in a serial
run). Phase 2 (a second run): calls drop every token (TOKS.clear(), V.set(None)), and 400 more
calls set a small value without keeping the token.
Serial invariant: after phase 2 nothing holds the payloads: RSS falls back near the start (<40 MB
above it) and a weakref-free census of live 250 KB bytearrays (gc.get_objects) is 0.
Attacks: the token registry holds tokens (an id alone is soon another token's) and let go of
those only it held when it grew past a limit: tokens the program dropped, and the payloads they
replaced, stayed alive after run() returned.
"""
import contextvars
import gc
import os
import weakref
import transaction

V = contextvars.ContextVar("V", default=None)
TOKS = []
SIZE = 250_000


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1e6


class Payload:
    def __init__(self):
        self.data = bytearray(SIZE)


REFS = []


def keep(i):
    p = Payload()
    REFS.append(weakref.ref(p))
    TOKS.append(V.set(p))


def drop():
    TOKS.clear()
    V.set(None)


def small(i):
    V.set(i)


def main():
    base = rss_mb()
    for i in range(400):
        transaction.add(keep, i)
    transaction.run()
    peak = rss_mb()
    transaction.add(drop)
    transaction.run()
    for i in range(int(os.environ.get('NSMALL', '40'))):
        transaction.add(small, i)
    transaction.run()
    gc.collect()
    live = sum(1 for r in REFS if r() is not None)
    after = rss_mb()
    print(f"rss base {base:.0f} MB peak {peak:.0f} MB after {after:.0f} MB; live payloads {live}")
    print("OK" if live == 0 else "BAD")


main()
