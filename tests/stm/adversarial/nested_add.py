"""``transaction.add`` from inside a running call: each job queues one follow-up.

Serial invariant: exactly ``K`` jobs and ``K`` follow-ups run, each once,
and every follow-up sees its job's write (the job committed before the
follow-up started, whatever order the job made its writes in).

Attacks: ``transaction.add`` is a hand-off: the queued call must be released
only when the section that queued it commits, exactly once however often
that section aborted, and never before the section's later writes.
"""

import transaction

K = 200
seen = {}
stats = {"n": 0, "f": 0}
bad = []


def follow(i):
    if seen.get(i) != "job":
        bad.append(("follow-up before job commit", i, seen.get(i)))
    seen[i] = "followed"
    stats["f"] += 1


def job(i):
    stats["n"] += 1
    transaction.add(follow, i)
    seen[i] = "job"             # written after the add: the follow-up must still see it


def main():
    for i in range(K):
        transaction.add(job, i)
    transaction.run()
    if stats != {"n": K, "f": K}:
        bad.append(("counts", stats))
    if len(seen) != K or any(v != "followed" for v in seen.values()):
        bad.append(("seen", len(seen)))
    print("BAD" if bad else "OK", len(bad), bad[:3])


main()
