"""Exceptions whose arguments hold shared containers, formatted after the
call's own write to them: a module-level ValueError("items", L) and
KeyError(D), and one the call builds itself around L, each formatted with
str, repr, an f-string and %; other calls only read and format. Every call
also appends to L, so calls conflict.

Serial invariant: the text a call formats shows its own append (its i is in
L's text), and the list's length in the text is the length the call reads.
Attacks: an exception's ``args`` (a C field that BaseException.__str__ and
__repr__ format) was not walked by the readers of nested values: the
section's own writes were missed, also for an exception it made itself,
and a concurrent change went unrecorded. Red-team round 19 (exc_args_own,
exc_args_private).
"""
import sys
import transaction

L = [0]
D = {"a": 0}
E = ValueError("items", L)
K = KeyError(D)
BAD = []


def texts(error):
    return [str(error), repr(error), f"{error}", "%s" % (error,)]


def step(i):
    L.append(i)
    D["k%d" % i] = i
    mine = ValueError("mine", L)
    for text in texts(E) + texts(mine):
        if ", %d]" % i not in text or text.count(",") != len(L):
            BAD.append((i, "own", text[-40:]))
            break
    if any("'k%d': %d" % (i, i) not in text for text in texts(K)):
        BAD.append((i, "dict", str(K)[-40:]))


def peek(i):
    text = str(E)
    n = len(L)
    if text.count(",") != n:
        BAD.append((i, "torn", text.count(","), n))


def main():
    for i in range(1, 301):
        transaction.add(step if i % 3 else peek, i)
    transaction.run()
    if BAD:
        print("BAD", len(BAD), BAD[:3])
        sys.exit(1)
    print("OK", len(L))


main()
