"""A key's own ``__eq__`` raises when a call writes a colliding key into a shared dict.

Serial invariant: ``d[1] = i`` compares the stored ``Key(1)`` with ``1``
(equal hashes), and ``Key.__eq__`` raises AttributeError on an int: each of
the 50 calls logs itself, catches the error, and counts it. So 50 entries
in the log, 50 errors caught, and no int key in the dict.

Attacks: where a buffered dict write runs the key comparison. If the
engine only buffers the write and compares at publication, the error is
raised at commit instead of in the section (outside the ``try``), the
commit fails and the retry logs the call again.
"""

import transaction


class Key:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return self.n == other.n            # AttributeError against an int

    def __hash__(self):
        return hash(self.n)


K = 50
d = {Key(1): 0}
log = []
errors = []


def job(i):
    log.append(i)
    try:
        d[1] = i
    except AttributeError:
        errors.append(i)


def main():
    bad = []
    for i in range(K):
        transaction.add(job, i)
    try:
        transaction.run()
    except Exception as exc:
        bad.append(("raised", repr(exc)))
    if len(log) != K or len(errors) != K:
        bad.append(("counted", len(log), len(errors)))
    if any(type(key) is int for key in d):
        bad.append(("int key written", list(d.items())))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
