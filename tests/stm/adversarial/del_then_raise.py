"""A call that raises after ``del conf.timeout`` on an instance that only has the
class default (seventh round).

Serial invariant: every call raises ValueError (after its own del raised
AttributeError and was caught); transaction.run() re-raises the first one,
and the run ends.

Attacks: the exception path of a section whose commit failed half-way: the
world lock stayed held and every other worker waited for ever.
"""
import transaction

K = 50


class Conf:
    timeout = 10


conf = Conf()


def job(i):
    try:
        del conf.timeout
    except AttributeError:
        pass
    raise ValueError(i)


def main():
    for i in range(K):
        transaction.add(job, i)
    try:
        transaction.run()
    except ValueError:
        print("OK")
        return
    print("BAD no exception")


main()
