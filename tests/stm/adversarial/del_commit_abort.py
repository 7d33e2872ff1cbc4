"""A temporary object (its __init__ counts MADE, its __del__ counts FREED) in a
call that then bumps a contended counter (seventh round).

Serial invariant: every Res made is freed exactly once: MADE == FREED == K
at the end, and COUNT == K.

Attacks: a finalizer of the attempt's own object, run when the commit drops
the attempt's registry of what it made. It was put off to run after the
section, and ran even when that commit then failed its validation (FREED
1616 for 1500 made); it now runs in the attempt, and is dropped with it.
"""
import gc
import transaction

K = 1500
MADE = 0
FREED = 0
COUNT = 0


class Res:
    def __init__(self, i):
        global MADE
        MADE += 1
        self.i = i

    def __del__(self):
        global FREED
        FREED += 1


def spin():
    x = 0
    for j in range(300):
        x += j
    return x


def job(i):
    global COUNT
    n = Res(i).i          # a temporary: gone right away
    c = COUNT
    spin()
    COUNT = c + 1 + n * 0


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    gc.collect()
    ok = MADE == FREED == COUNT == K
    print("OK" if ok else "BAD made %d freed %d count %d want %d" % (MADE, FREED, COUNT, K))


main()
