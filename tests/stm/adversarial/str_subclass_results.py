"""Strings an application object makes for ``str()``, ``repr()``, ``format()``, ``f"{x}"`` and ``"%.5s" % (x,)``: a str subclass whose operators look shared state up.

A token moves between two shared lists. Readers reach them only through
the operators of a ``Key(str)`` that ``Thing.__str__`` (``__repr__``,
``__format__``) returns: ``str(T) + "a"`` is ``H["a"]``, and its truth is
tested. CPython hands such a subclass on as it is from ``str(x)``,
``repr(x)``, ``format(x)``, an f-string of one field and ``"%.5s" % (x,)``.
Serial invariant: exactly one list holds the token.
Attacks: the value analysis took those results for plain strings, so the
operators and the truth tests on them had no barrier (red-team round 33).
"""
import transaction

H = {"a": ["tok"], "b": []}
BADS = []


class Key(str):
    def __add__(self, k):
        return H[k]

    def __mod__(self, k):
        return H[k]

    def __mul__(self, n):
        return H["ab"[n]]


class Thing:
    def __str__(self):
        return Key("k")

    def __repr__(self):
        return Key("k")

    def __format__(self, spec):
        return Key("k")


T = Thing()


def mover(i):
    a = H["a"]
    b = H["b"]
    if a:
        b.append(a.pop())
    else:
        a.append(b.pop())


def by_str():
    s = str(T)
    return (1 if s + "a" else 0) + (1 if s + "b" else 0)


def by_repr():
    s = repr(T)
    return (1 if s % "a" else 0) + (1 if s % "b" else 0)


def by_format():
    s = format(T)
    return (1 if s * 0 else 0) + (1 if s * 1 else 0)


def by_fstring():
    s = f"{T}"
    return (1 if s + "a" else 0) + (1 if s + "b" else 0)


def by_percent():
    s = "%.5s" % (T,)          # ("%s" % (T,) is compiled into an f-string: a plain str)
    return (1 if s + "a" else 0) + (1 if s + "b" else 0)


FORMS = (by_str, by_repr, by_format, by_fstring, by_percent)


def reader(i):
    if FORMS[i % 5]() != 1:
        BADS.append((i % 5, i))


for i in range(6000):
    transaction.add(mover, i)
    transaction.add(reader, i)
transaction.run()
print("OK" if not BADS else "BAD", len(BADS), BADS[:5])
