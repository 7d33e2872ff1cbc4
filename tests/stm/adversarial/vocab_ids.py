"""Building a vocabulary (word -> dense id) from many documents, the usual idiom
``VOCAB.update((w, len(VOCAB)) for w in doc if w not in VOCAB)``.
Serial invariant: the ids are exactly 0..len(VOCAB)-1, each once (dense, unique),
and every word of every document is in VOCAB.
Attacks: dict.update of a shared dict fed by a generator that reads the dict
(len, `in`): the update is buffered, so the generator never sees the keys the
same update already added: repeated words get a second id, ids repeat or skip.
"""
import random
import sys
import transaction

VOCAB = {}
rng = random.Random(7)
ALL = ["w%d" % k for k in range(60)]
DOCS = [[rng.choice(ALL) for _ in range(8)] for _ in range(400)]


def add_doc(doc):
    VOCAB.update((w, len(VOCAB)) for w in doc if w not in VOCAB)


def main():
    for d in DOCS:
        transaction.add(add_doc, d)
    transaction.run()
    ids = sorted(VOCAB.values())
    missing = {w for d in DOCS for w in d} - VOCAB.keys()
    ok = ids == list(range(len(VOCAB))) and not missing
    print("OK" if ok else "BAD", len(VOCAB), ids[:12], ids[-5:], len(missing))
    return 0 if ok else 1


sys.exit(main())
