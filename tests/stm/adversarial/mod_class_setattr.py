"""A module whose class overrides __setattr__ (validation + audit log).
Sections set guarded.LIMIT; some try a negative value and catch ValueError.
Serial invariant: N//2 ValueErrors, LIMIT never negative, WRITES has N//2 entries.
Red-team round 18: BAD on every run. A module class's own __setattr__ runs
for mod.name = v.
Attacks: module attribute barriers that write the namespace, past the
module class's own __setattr__.
"""
import sys
import transaction
from appstate import guarded

N = 20
ERRS = []


def step(i):
    v = i if i % 2 == 0 else -i
    try:
        guarded.LIMIT = v
    except ValueError:
        ERRS.append(i)


def main():
    for i in range(N):
        transaction.add(step, i)
    transaction.run()
    if len(ERRS) != N // 2 or guarded.LIMIT < 0 or len(guarded.WRITES) != N // 2:
        print("BAD", len(ERRS), guarded.LIMIT, len(guarded.WRITES)); sys.exit(1)
    print("OK", guarded.LIMIT)


main()
