"""Commands decoded with ``json.loads(text, object_hook=resolve)``, where the
hook resolves ``{"acct": k}`` to the existing shared account object.

Serial invariant: every call decodes a command naming one account and adds 1
to that account's ``n`` (and to the global count ``done``); after K calls
the accounts' ``n`` total ``K == done``.

Attacks: ``json.loads`` is ``pure fresh`` in the policy table, so its
result is adopted as an object the section made (private: read and written
in place, never logged), unless it is one of the call's arguments. With an
``object_hook`` the result is whatever the hook returns: here a shared
account, which the section then changes in place, unlogged, unversioned,
and again on every retry.
"""
import json
import transaction

N = 4
K = 600


class Acct:
    def __init__(self, k):
        self.k = k
        self.n = 0


ACCTS = [Acct(k) for k in range(N)]
done = 0


def resolve(d):
    return ACCTS[d["acct"]]


def step(i):
    global done
    acct = json.loads('{"acct": %d}' % (i % N), object_hook=resolve)
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
