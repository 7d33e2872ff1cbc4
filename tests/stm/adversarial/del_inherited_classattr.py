"""``del Sub.limit`` when only the base class defines ``limit``, guarded by ``except AttributeError``.

Serial invariant (plain Python): ``del Sub.limit`` raises AttributeError
(Sub has no ``limit`` of its own), which the call catches and counts;
``Base.limit`` is untouched and every call counts one refusal. The run
ends normally with ``refused == K``.

Attacks: ``del Sub.limit`` of an inherited attribute was checked with
hasattr (true through Base), logged, and dropped silently at commit: no
AttributeError. Now a class must have the name in its own dict, as this
section sees it.
"""
import transaction

K = 50
STATE = {"refused": 0, "n": 0}


class Base:
    limit = 10


class Sub(Base):
    pass


def step(i):
    STATE["n"] += 1
    try:
        del Sub.limit
    except AttributeError:
        STATE["refused"] += 1


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    ok = STATE == {"refused": K, "n": K} and Base.limit == 10 and "limit" not in Sub.__dict__
    print("OK" if ok else "BAD", STATE, Base.limit)


main()
