"""A method swapped on the class at run time (``Codec.encode = codecs_by_version[n]``), called through instances.

Serial invariant: a switch installs version n's function as
``Codec.encode`` and sets ``Codec.version = n`` in the same call, so
``c.encode()`` (looked up through an instance) always returns the current
``Codec.version``, also in the call that just switched.

Attacks: a method replaced on the class was read through instances as a
value of the instance (versioned per object only): stale methods, torn
against ``Codec.version``. Now a write that changes what kind of thing a
class holds under a name reshapes the class: in place, inevitably, holding
RESHAPE_STRIPE (every overlapping section aborts), with the cached attribute
kinds dropped.
"""
import transaction

K = 2000
bad = []


def make(n):
    def encode(self):
        return n
    return encode


VERSIONS = [make(n) for n in range(K + 1)]


class Codec:
    version = 0
    encode = VERSIONS[0]


C = Codec()


def step(i):
    if i % 5 == 0:
        Codec.encode = VERSIONS[i]
        Codec.version = i
        got = C.encode()
        if got != i:
            bad.append(("own switch not seen", i, got))
    else:
        got = C.encode()
        v = Codec.version
        if got != v:
            bad.append(("torn", i, got, v))


def main():
    for i in range(K):
        transaction.add(step, i)
    transaction.run()
    if C.encode() != Codec.version:
        bad.append(("final", C.encode(), Codec.version))
    print("BAD" if bad else "OK", len(bad), sorted({b[0] for b in bad}), bad[:2])


main()
