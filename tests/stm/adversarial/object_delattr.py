"""a meter drained by ``object.__delattr__``.

Serial invariant: an increment adds 1 to ``M.n`` (class default 0 after a
delete); a drain moves the current value into ``DRAINED`` and deletes the
instance value through ``Meter.__delattr__`` -> ``object.__delattr__``.
Nothing is counted twice or lost: ``sum(DRAINED) + M.n == increments``.

Attacks: ``object.__delattr__`` has no special handler (``object.__setattr__``
has): it is unknown to the policy table, so it runs in place in an
inevitable section and gives ``M.n`` no new version; an increment that
read ``M.n`` before the drain commits ``old + 1`` over it.
"""
import transaction


class Meter:
    n = 0

    def __delattr__(self, name):
        object.__delattr__(self, name)


M = Meter()
M.n = 0
DRAINED = []
K = 600


def inc(i):
    v = M.n
    t = 0
    for j in range(300):
        t += j
    M.n = v + 1


def drain(i):
    v = M.n
    if v:
        DRAINED.append(v)
        del M.n


def step(i):
    (drain if i % 6 == 0 else inc)(i)


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    incs = K - (K + 5) // 6
    got = sum(DRAINED) + M.n
    print("BAD counted" if got != incs else "OK", got, "of", incs)


main()
