"""A call that raises ends transaction.run(): nothing runs after it in a serial run.

Serial invariant: every call appends its id to LOG; call R appends then
raises. In every serial order the raising call is the last to run, so LOG
ends with R (calls that start before it finish first).

Attacks: calls other workers had already taken committed after the call
whose exception ends ``run()``, and saw its writes. Now the raising call
writes a flag of the run that every call reads first: an overlapping call
aborts, and finds the run ended when it runs again.
"""
import transaction

K = 400
R = 150
LOG = []
stats = {"n": 0}


def spin(n):
    t = 0
    for j in range(n):
        t += j
    return t


def step(i):
    spin(3000)
    stats["n"] += 1
    LOG.append(i)
    if i == R:
        raise ValueError(i)


def main():
    for i in range(K):
        transaction.add(step, i)
    try:
        transaction.run()
    except ValueError:
        pass
    if not LOG or LOG[-1] != R or stats["n"] != len(LOG):
        print("BAD last", LOG[-3:], stats["n"], len(LOG))
    else:
        print("OK", len(LOG))


main()
