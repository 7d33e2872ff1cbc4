"""Application decorators written with ``functools.wraps``, called from a section.

Serial invariant: the wrappers run, as in plain Python. The permission check
refuses the guest (PermissionError, nothing deleted), the counter counts all
10 calls, and the cached factory returns the same object every time.

Attacks: how the call barrier finds the function an entry wrapper wraps. It
used ``__wrapped__``, which ``functools.wraps(f)`` sets to ``f`` on the
application's own (entry-wrapped) wrapper: a call from a section skipped the
decorator, and the guest deleted the rows (fifth round).
"""
import functools
import transaction

DATA = {"rows": [1, 2, 3]}
calls = {"n": 0}
out = {}


def require_admin(f):
    @functools.wraps(f)
    def wrapper(user, *a):
        if user != "admin":
            raise PermissionError(user)
        return f(user, *a)
    return wrapper


def counted(f):
    @functools.wraps(f)
    def wrapper(*a):
        calls["n"] += 1
        return f(*a)
    return wrapper


@require_admin
def delete_all(user):
    DATA["rows"] = []


@counted
def work(i):
    return i


class Conn:
    pass


@functools.cache
def connection(name):
    return Conn()


def job(i):
    work(i)
    if i == 0:
        try:
            delete_all("guest")
            out["denied"] = False
        except PermissionError:
            out["denied"] = True
        out["same_conn"] = connection("db") is connection("db")


def main():
    for i in range(10):
        transaction.add(job, i)
    transaction.run()
    got = {"denied": out["denied"], "rows": DATA["rows"], "calls": calls["n"],
           "same_conn": out["same_conn"]}
    want = {"denied": True, "rows": [1, 2, 3], "calls": 10, "same_conn": True}
    print("OK" if got == want else "BAD got %r want %r" % (got, want))


main()
