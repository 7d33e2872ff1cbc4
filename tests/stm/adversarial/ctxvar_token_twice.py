"""A context variable token made by one queued call is reset by a later call, and
then once more by a third call (a double release of a request scope).
Serial invariant: in every serial order in which 'set' ran before both resets,
the first reset restores the old value and the second raises RuntimeError
("Token has already been used once"); a reset of a token made for ANOTHER var
raises ValueError (RuntimeError once the token was used). Every order: each reset call records exactly one outcome and
the var ends at its default when both resets ran after the set.
Attacks: run_context's token handling across workers (round 21 J6 fix): is a
token's used-once state, and the var it belongs to, kept when the token is
replayed on another worker's context?
"""
import contextvars
import transaction

V = contextvars.ContextVar("V", default="dflt")
W = contextvars.ContextVar("W", default="w")
TOK = {}
OUT = []


def setter():
    TOK["t"] = V.set("scoped")


def resetter(tag):
    t = TOK.get("t")
    if t is None:
        OUT.append((tag, "no token"))
        return
    try:
        V.reset(t)
        OUT.append((tag, "reset"))
    except RuntimeError:
        OUT.append((tag, "RuntimeError"))
    except ValueError:
        OUT.append((tag, "ValueError"))


def wrong_var():
    t = TOK.get("t")
    if t is None:
        OUT.append(("wrong", "no token"))
        return
    try:
        W.reset(t)
        OUT.append(("wrong", "reset"))
    except ValueError:
        OUT.append(("wrong", "ValueError"))
    except RuntimeError:                 # (after a reset used it: CPython checks "used" first)
        OUT.append(("wrong", "RuntimeError"))


transaction.add(setter)
transaction.run()
transaction.add(resetter, "r1")
transaction.add(resetter, "r2")
transaction.add(wrong_var)
transaction.run()
outs = sorted(o for _, o in OUT if _ != "wrong")
wrong = [o for t, o in OUT if t == "wrong"]
ok = outs == ["RuntimeError", "reset"] and wrong in (["ValueError"], ["RuntimeError"]) and V.get() == "dflt"
print(OUT, V.get())
print("OK" if ok else "BAD")
raise SystemExit(0 if ok else 1)
