"""Each call imports (lazily, inside the function) a package module whose top
level starts a background flusher thread on a queue, puts an item and waits
for it to be flushed (Q.join()).

Serial invariant (and plain threads): FLUSHED holds every item once; ends.
Attacks: a thread started by an instrumented module's top-level code that runs
inside a section (the import happens in a queued call): section._start_from_plain_code
does not make it plain (CURRENT.tx is set), W loans.
Red-team round 17: hung 1/1 in every mode. A thread started by a module's
top-level code runs as plain code also when a section imports the module.
"""
import sys
import transaction

N = 30


def call(i):
    from appstate import flusher
    flusher.Q.put(i)
    flusher.Q.join()


def main():
    for i in range(N):
        transaction.add(call, i)
    transaction.run()
    from appstate import flusher
    if sorted(flusher.FLUSHED) != list(range(N)):
        print("BAD", flusher.FLUSHED); sys.exit(1)
    print("OK", len(flusher.FLUSHED))


main()
