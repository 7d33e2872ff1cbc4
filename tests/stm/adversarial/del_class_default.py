"""Resetting an attribute to its class default with ``del conf.timeout``, guarded
by ``except AttributeError`` for an instance that never overrode it (seventh round).

Serial invariant: every call adds one to conf.n (K in all), and conf.timeout
reads the class default 10 at the end.

Attacks: ``del`` of a name the instance does not have. The engine asked
``hasattr``, which the class default answers, logged a deletion, and the
commit's publication raised AttributeError half-way: each call's earlier
writes were published again on every retry (n 3300 for 300 calls), and a call
that raised afterwards left the world lock held (a hang). The instance's own
value is asked for now, and a publication never raises for a deletion.
"""
import transaction

K = 300


class Conf:
    timeout = 10

    def __init__(self):
        self.n = 0


conf = Conf()


def reset(i):
    conf.n = conf.n + 1
    try:
        del conf.timeout
    except AttributeError:
        pass


def main():
    for i in range(K):
        transaction.add(reset, i)
    transaction.run()
    ok = conf.n == K and conf.timeout == 10
    print("OK" if ok else "BAD n %d want %d timeout %r" % (conf.n, K, conf.timeout))


main()
