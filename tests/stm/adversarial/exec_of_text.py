"""``exec`` and ``eval`` of text in a section: plain code reading and writing the module's globals in place.

Each call adds one to a module counter through ``exec("HITS = HITS + 1",
globals())``, or reads a shared dict with ``eval`` and writes it back.
Serial invariants: both counters count every call, exactly once.
Attacks: the code ``exec`` runs had no barrier: concurrent calls lost
updates, and an attempt that aborted after its ``exec`` kept its write, so
under forced aborts the counter counted more than the calls (red-team
round 36).
"""
import transaction

N = 1200
HITS = 0
TALLY = {"n": 0}


def by_exec(i):
    exec("HITS = HITS + 1", globals())
    for _ in range(50):
        pass


def by_eval(i):
    n = eval("TALLY['n']")
    for _ in range(50):
        pass
    TALLY["n"] = n + 1


for i in range(N):
    transaction.add(by_exec, i)
    transaction.add(by_eval, i)
transaction.run()
print("OK" if HITS == N and TALLY["n"] == N else "BAD", HITS, TALLY["n"], N)
