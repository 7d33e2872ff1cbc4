"""``copy.copy`` of a handle whose ``__reduce__`` names a shared registry entry.

Serial invariant: a ``Handle`` pickles (and copies) as "the account with this
key", so ``copy.copy(handle)`` returns the shared account itself, as
``copy`` does for any object whose reduce value rebuilds an existing one.
Every call adds 1 to ``copy.copy(HANDLES[k]).n`` and to ``done``: the
accounts' ``n`` total ``K == done``.

Attacks: ``copy.copy`` is ``pure fresh``: its result is adopted as the
section's own object (written in place, never logged) unless it *is* the
argument. Here it is another shared object, rebuilt by the reduce value's
callable: the section writes it in place, unlogged and unversioned.
"""
import copy
import transaction

N = 4
K = 600


class Acct:
    def __init__(self):
        self.n = 0


ACCTS = [Acct() for _ in range(N)]


def account(k):
    return ACCTS[k]


class Handle:
    def __init__(self, k):
        self.k = k

    def __reduce__(self):
        return (account, (self.k,))


HANDLES = [Handle(k) for k in range(N)]
done = 0


def step(i):
    global done
    acct = copy.copy(HANDLES[i % N])
    acct.n += 1
    done += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    total = sum(a.n for a in ACCTS)
    if total != K or done != K:
        print("BAD lost or doubled updates", total, done, "of", K)
    else:
        print("OK", total, done)


main()
