"""Pooled resources counted by __init__ (made) and __del__ (freed).

Serial invariant: every Res made is freed exactly once once the pool is
dropped, so at the end MADE == FREED. Readers hold a pool entry in a local
while writers replace pool entries.

Attacks: ``__del__`` wherever CPython runs it. The first pool's entries
were made on the main thread, and free-threaded CPython frees an object on
the thread that made it: their ``__del__`` ran on the main thread while it
waited in ``transaction.run()``, as plain module-body code, and its
``FREED += 1`` read and wrote between two commits of the workers (one lost
in about one run of eight under faults). Also: an entry's ``__del__`` while
a commit writes its log to the heap, and an object whose address another
thread reuses after an aborted attempt's object died there.
"""
import gc
import transaction

K = 1500
MADE = 0
FREED = 0


class Res:
    def __init__(self, i):
        global MADE
        MADE += 1
        self.i = i

    def __del__(self):
        global FREED
        FREED += 1


POOL = [Res(-1) for _ in range(8)]


def spin():
    x = 0
    for j in range(300):
        x += j
    return x


def replace(i):
    POOL[i % 8] = Res(i)


def use(i):
    r = POOL[i % 8]
    spin()
    other = POOL[(i + 3) % 8]      # reads the pool again: a conflict aborts here, r alive
    return r.i + other.i


def main():
    for i in range(K):
        transaction.add(replace if i % 2 else use, i)
    transaction.run()
    POOL.clear()
    gc.collect()
    print("OK" if MADE == FREED else "BAD made %d freed %d" % (MADE, FREED))


main()
