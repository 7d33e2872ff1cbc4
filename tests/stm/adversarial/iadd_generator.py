"""``LOG += gen`` with a generator handed to each queued call.

Serial invariant: every call gets its own generator of 3 items (made in
``main()``, before ``run()``), appends them to the shared ``LOG`` with
``+=`` and bumps ``calls``; at the end ``LOG`` holds ``3 * K`` items, each
once, and ``calls == K``.

Attacks: the augmented assignment barrier gives ``list.__iadd__`` the
section's private copy of ``LOG``, and only a shared *container* operand
is replaced by its read shadow: any other operand goes to C as it is. A
generator made outside the section is consumed there in an optimistic
section (``LOG.extend(gen)`` would have made it inevitable first): an
aborted attempt has used it up, and the retry appends nothing.
"""
import transaction

K = 400
LOG = []
calls = 0


def items(i):
    for j in range(3):
        yield (i, j)


def step(i, gen):
    global LOG, calls
    LOG += gen
    calls += 1


def main():
    for i in range(K):
        transaction.add(step, i, items(i))
    transaction.run()
    if len(LOG) != 3 * K or len(set(LOG)) != len(LOG) or calls != K:
        print("BAD items lost or doubled", len(LOG), len(set(LOG)), "of", 3 * K, "calls", calls)
    else:
        print("OK", len(LOG), calls)


main()
