"""Tokens of context variables made by queued calls and reset by the calls of a
later transaction.run() (the begin/end jobs of a batch), each round alongside
busy calls so that the two land on different workers.

Serial invariant: a serial run makes every call in the caller's one context, so
every reset succeeds (no ValueError) and, after each round, both variables are
back where the script left them: VAR at its default, NAMED at "base".
Attacks: run_context -- each worker runs in its own copy of the caller's
context, and Python's reset refuses a token made in another copy
(run_context._reset_as_in_one_context), including a reset back to no value.
Red-team round 21 (J6).
"""
import contextvars
import sys
import transaction

VAR = contextvars.ContextVar("VAR", default="none")
NAMED = contextvars.ContextVar("NAMED")
NAMED.set("base")
TOKENS = {}
ERRORS = []
AFTER = []


def begin(i):
    TOKENS[i] = (VAR.set("batch%d" % i), NAMED.set("named%d" % i))


def end(i):
    var_token, named_token = TOKENS.pop(i)
    try:
        VAR.reset(var_token)
        NAMED.reset(named_token)
    except ValueError as error:
        ERRORS.append((i, str(error)[:60]))


def busy(i):
    x = 0
    for j in range(2000):
        x += j
    return x


def main():
    for i in range(30):
        for j in range(3):
            transaction.add(busy, j)
        transaction.add(begin, i)
        transaction.run()
        transaction.add(end, i)
        for j in range(3):
            transaction.add(busy, j)
        transaction.run()
        AFTER.append((VAR.get(), NAMED.get()))
    bad = ERRORS or set(AFTER) != {("none", "base")}
    print("BAD" if bad else "OK", ERRORS[:2], sorted(set(AFTER))[:3])
    return 1 if bad else 0


sys.exit(main())
