"""The grammar: one generator per construct family, each drawing a program from a seed.

A family fixes the shared state and the invariant (conservation of a total,
a bounded buffer, two containers kept equal, a counter equal to the number
of increments...); the seed picks the container kinds, the Python forms
used to read and write them (truthiness, operators, unpacking, lazy
iterators, ``collections`` methods, class attributes, globals, closures,
exceptions, inevitable calls), the busy-loop lengths that widen race
windows, and the driver (2 or 4 threads, plain threads or a
``TransactionQueue``). Every invariant holds after any serial order of any
calls: :func:`tests.stm.difftest.runner.run_serial` checks the generator
itself.
"""

from __future__ import annotations

import functools
import random
from typing import Callable

from tests.stm.difftest.program import Program

#: Lengths of the busy loops that sit between a read and the write it feeds.
SPINS = (100, 400, 1500)

Family = Callable[[random.Random], tuple[str, str, list[str], bool, bool]]


def _block(*lines: str, indent: int = 1) -> str:
    """Lines of a function body (already relative), indented ``indent`` levels."""
    pad = "    " * indent
    out = []
    for line in lines:
        for sub in line.split("\n"):
            out.append(pad + sub if sub else "")
    return "\n".join(out)


def _def(name: str, *lines: str, args: str = "i") -> str:
    return f"def {name}({args}):\n" + _block(*lines) + "\n"


def _check(*lines: str) -> str:
    """The program's ``check(calls)``: ``lines`` append to ``problems``, which it returns."""
    return _def("check", "problems = []", *lines, "return problems", args="calls")


# -- bank: conservation of a total ---------------------------------------------

_DICT_KINDS = ("dict", "stmdict", "stmiddict", "defaultdict", "Counter", "OrderedDict")


def bank(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    kind = rng.choice(_DICT_KINDS + ("list", "slots"))
    n = rng.choice((3, 4, 6))
    spin = rng.choice(SPINS)
    state = [f"N = {n}", "INIT = 100", "TOTAL = N * INIT",
             "KEYS = tuple('k%d' % j for j in range(N))"]
    if kind in _DICT_KINDS:
        ctor = {"dict": "{}", "stmdict": "stmdict()", "stmiddict": "stmiddict()",
                "defaultdict": "defaultdict(int)", "Counter": "Counter()",
                "OrderedDict": "OrderedDict()"}[kind]
        state += [f"ACC = {ctor}", "for _k in KEYS:\n    ACC[_k] = INIT"]
        key = "KEYS[{}]"
        # stmiddict.update is dict.update: it bypasses the identity keying, even plain.
        writes = ["rmw", "aug", "richest"] + (["update"] if kind != "stmiddict" else []) + (
            ["counter"] if kind == "Counter" else [])
        audits = ["values", "loop", "items", "get"] + (
            ["splat", "dictcall"] if kind != "stmiddict" else [])
    elif kind == "list":
        state += ["ACC = [INIT] * N"]
        key = "{}"
        writes = ["rmw", "aug", "slice", "richest"]
        audits = ["values", "loop", "splat", "fstring", "percent", "unpack_star"]
    else:
        state += ["class Acct:\n    __slots__ = ('bal',)\n    def __init__(self, bal):\n"
                  "        self.bal = bal",
                  "ACC = [Acct(INIT) for _ in range(N)]"]
        key = "{}"
        writes = ["rmw", "aug"]
        audits = ["values", "loop"]
    write = rng.choice(writes)
    audit = rng.choice(audits)

    pick = ["a = i % N", "b = (a + 1 + (i // 7) % (N - 1)) % N", "amt = 1 + i % 7"]
    if kind in _DICT_KINDS:
        pick += ["a = KEYS[a]", "b = KEYS[b]"]
    if kind == "slots":
        body = {"rmw": ["x = ACC[a].bal", f"_spin({spin})", "ACC[a].bal = x - amt",
                        "ACC[b].bal = ACC[b].bal + amt"],
                "aug": ["ACC[a].bal -= amt", f"_spin({spin})", "ACC[b].bal += amt"]}[write]
    else:
        body = {
            "rmw": ["x = ACC[a]", f"_spin({spin})", "ACC[a] = x - amt", "ACC[b] = ACC[b] + amt"],
            "aug": ["ACC[a] -= amt", f"_spin({spin})", "ACC[b] += amt"],
            "update": (["na = ACC[a] - amt", "nb = ACC[b] + amt", f"_spin({spin})",
                        "ACC.update({a: na, b: nb})"] if kind != "Counter" else
                       ["x = ACC[a]", f"_spin({spin})", "ACC.update({a: -amt, b: amt})",
                        "if ACC[a] != x - amt:\n    _torn('Counter.update lost own write')"]),
            "counter": ["ACC.subtract({a: amt})", f"_spin({spin})", "ACC.update({b: amt})"],
            "slice": ["lo, hi = min(a, b), max(a, b)", "part = ACC[lo:hi + 1]",
                      f"_spin({spin})", "part[a - lo] -= amt", "part[b - lo] += amt",
                      "ACC[lo:hi + 1] = part"],
            "richest": ([("a = max(ACC, key=ACC.get)" if kind in _DICT_KINDS
                          else "a = ACC.index(max(ACC))"),
                         ("b = KEYS[(KEYS.index(a) + 1) % N]" if kind in _DICT_KINDS
                          else "b = (a + 1) % N"),
                         "x = ACC[a]", f"_spin({spin})", "ACC[a] = x - amt",
                         "ACC[b] = ACC[b] + amt"]),
        }[write]
    transfer = _def("op_transfer", *pick, *body)

    if kind == "slots":
        total = {"values": "total = sum(acct.bal for acct in ACC)",
                 "loop": "total = 0\nfor acct in ACC:\n    total += acct.bal\n"
                         f"    _spin({spin // 3})"}[audit]
    elif kind == "list":
        total = {"values": "total = sum(ACC)",
                 "loop": f"total = 0\nfor j in range(N):\n    total += ACC[j]\n    _spin({spin // 3})",
                 "splat": "snap = [*ACC]\ntotal = sum(snap)",
                 "fstring": "text = f'{ACC}'\ntotal = sum(int(p) for p in text.strip('[]').split(', '))",
                 "percent": "text = '%s' % (ACC,)\ntotal = sum(int(p) for p in text.strip('[]').split(', '))",
                 "unpack_star": "first, *rest = ACC\ntotal = first + sum(rest)"}[audit]
    else:
        total = {"values": "total = sum(ACC.values())",
                 "loop": f"total = 0\nfor k in KEYS:\n    total += ACC[k]\n    _spin({spin // 3})",
                 "items": "total = sum(v for _, v in ACC.items())",
                 "get": "total = sum(map(ACC.get, KEYS))",
                 "splat": "snap = {**ACC}\ntotal = sum(snap.values())",
                 "dictcall": "total = sum(dict(ACC).values())"}[audit]
    audit_fn = _def("op_audit", total, "if total != TOTAL:\n    _torn('audit saw total %r' % (total,))")
    if kind == "slots":
        final = "total = sum(acct.bal for acct in ACC)"
    elif kind == "list":
        final = "total = sum(ACC)"
    else:
        final = "total = sum(ACC[k] for k in KEYS)"
    check = _check(final,
                   "if total != TOTAL:\n    problems.append('final total %r != %r' % (total, TOTAL))")
    body_src = "\n".join(state) + "\n\n\n" + transfer + "\n\n" + audit_fn + "\n\n" + check
    variant = f"kind={kind} write={write} audit={audit} spin={spin}"
    return variant, body_src, ["op_transfer", "op_transfer", "op_audit"], False, True


# -- buffer: a bounded buffer guarded by truthiness ----------------------------

def buffer(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    kind = rng.choice(("list", "deque", "dict", "OrderedDict", "set"))
    cap = rng.choice((1, 2, 3, 5))
    spin = rng.choice(SPINS)
    counters = rng.choice(("dict", "globals"))
    ctor = {"list": "[]", "deque": "deque()", "dict": "{}", "OrderedDict": "OrderedDict()",
            "set": "set()"}[kind]
    add = {"list": "BUF.append(i)", "deque": rng.choice(("BUF.append(i)", "BUF.appendleft(i)")),
           "dict": "BUF[i] = i", "OrderedDict": "BUF[i] = i", "set": "BUF.add(i)"}[kind]
    take = {"list": ("BUF.pop(0)", "BUF.pop()", "del BUF[0]", "x = BUF[-1]\nBUF.remove(x)"),
            "deque": ("BUF.popleft()", "BUF.pop()", "x = BUF[0]\nBUF.remove(x)"),
            "dict": ("BUF.popitem()", "del BUF[next(iter(BUF))]", "BUF.pop(min(BUF))"),
            "OrderedDict": ("BUF.popitem(last=False)", "BUF.popitem()",
                            "k = next(iter(BUF))\nBUF.move_to_end(k)\nBUF.popitem()"),
            "set": ("BUF.pop()", "BUF.remove(min(BUF))", "BUF.discard(max(BUF))")}[kind]
    take = rng.choice(take)
    full_guard = rng.choice(("len(BUF) < CAP", "not len(BUF) >= CAP", "CAP - len(BUF) > 0"))
    empty = {"list": "[]", "deque": "deque()", "dict": "{}", "OrderedDict": "OrderedDict()",
             "set": "set()"}[kind]
    guard = rng.choice(("truth", "not_return", "len", "bool", "or", "ne_empty", "and"))
    if counters == "dict":
        state_c = "STATS = {'produced': 0, 'consumed': 0}"
        inc_p, inc_c = "STATS['produced'] += 1", "STATS['consumed'] += 1"
        glob = ""
        produced, consumed = "STATS['produced']", "STATS['consumed']"
    else:
        state_c = "PRODUCED = 0\nCONSUMED = 0"
        inc_p, inc_c = "PRODUCED += 1", "CONSUMED += 1"
        glob = "global PRODUCED, CONSUMED\n"
        produced, consumed = "PRODUCED", "CONSUMED"
    produce = _def("op_produce", glob + f"if {full_guard}:\n    _spin({spin})\n"
                   + _block(add, inc_p))
    do_take = _block(f"_spin({spin})", take, inc_c)
    if guard == "not_return":
        consume = _def("op_consume", glob + "if not BUF:\n    return\n" + _block(f"_spin({spin})",
                                                                                take, inc_c, indent=0))
    else:
        cond = {"truth": "BUF", "len": "len(BUF) > 0", "bool": "bool(BUF)",
                "or": "(BUF or None) is not None", "ne_empty": f"BUF != {empty}",
                "and": "BUF and True"}[guard]
        consume = _def("op_consume", glob + f"if {cond}:\n" + do_take)
    peek = _def("op_peek", f"n = len(BUF)",
                f"if n > CAP:\n    _torn('buffer holds %d > CAP items' % n)",
                f"if {produced} - {consumed} != len(BUF):\n"
                f"    _torn('produced - consumed != len(BUF)')")
    check = _check(
                   "if len(BUF) > CAP:\n    problems.append('final buffer holds %d > CAP' % len(BUF))",
                   f"if {produced} - {consumed} != len(BUF):\n"
                   f"    problems.append('produced %d - consumed %d != len %d' % "
                   f"({produced}, {consumed}, len(BUF)))")
    body = (f"CAP = {cap}\nBUF = {ctor}\n{state_c}\n\n\n" + produce + "\n\n" + consume + "\n\n"
            + peek + "\n\n" + check)
    variant = f"kind={kind} take={take!r} guard={guard} cap={cap} counters={counters} spin={spin}"
    return variant, body, ["op_produce", "op_consume", "op_produce", "op_consume", "op_peek"], \
        False, True


# -- mirror: two containers updated together, compared with operators ----------

def mirror(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    kind = rng.choice(("list", "set", "dict"))
    spin = rng.choice(SPINS)
    own = rng.random() < 0.5
    if kind == "list":
        ctor, add, rm_guard = "[]", ("A.append(i)", "B.append(i)"), "if len(A) > 2:"
        remove = ("A.pop()", "B.pop()")
        forms = ("A == B", "not (A != B)", "[*A] == [*B]", "not (A < B) and not (B < A)",
                 "A + [0] == B + [0]", "list(A) == list(B)", "len(A) == len(B)",
                 "all(x == y for x, y in zip(A, B))")
    elif kind == "set":
        ctor, add, rm_guard = "set()", ("A.add(i)", "B.add(i)"), "if len(A) > 2:"
        remove = ("x = min(A)\nA.discard(x)", "B.discard(x)")
        forms = ("A == B", "not (A - B) and not (B - A)", "A | B == A & B",
                 "A.union(B) == A.intersection(B)", "not (A ^ B)", "A <= B <= A",
                 "set(A) == set(B)")
    else:
        ctor, add, rm_guard = "{}", ("A[i] = i", "B[i] = i"), "if len(A) > 2:"
        remove = ("k = next(iter(A))\ndel A[k]", "del B[k]")
        forms = ("A == B", "{**A} == {**B}", "A.items() == B.items()",
                 "(A | B) == A and len(A) == len(B)", "dict(A) == dict(B)",
                 "sorted(A) == sorted(B)")
    form = rng.choice(forms)
    own_check = (f"if not ({form}):\n    _torn('own writes: not ({form}) after updating both')"
                 if own else "")
    op_add = _def("op_add", add[0], f"_spin({spin})", add[1], own_check)
    op_remove = _def("op_remove", f"{rm_guard}\n" + _block(remove[0], f"_spin({spin})", remove[1]))
    op_compare = _def("op_compare", f"if not ({form}):\n    _torn('saw not ({form})')")
    check = _check(
                   "if A != B:\n    problems.append('final A != B: %r %r' % (A, B))")
    body = f"A = {ctor}\nB = {ctor}\n\n\n" + op_add + "\n\n" + op_remove + "\n\n" + op_compare \
        + "\n\n" + check
    variant = f"kind={kind} form={form!r} own_check={own} spin={spin}"
    return variant, body, ["op_add", "op_add", "op_remove", "op_compare", "op_compare"], False, True


# -- pair: unpacking, slices and formatting of a two-element list ---------------

def pair(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    spin = rng.choice(SPINS)
    read = rng.choice(("a, b = PAIR", "a, b = [*PAIR]", "a, b = tuple(PAIR)", "a, b = PAIR[:]",
                       "a, *rest = PAIR\nb = rest[0]", "a = PAIR[0]\nb = PAIR[1]",
                       "a, b = iter(PAIR)", "(a, b), = [PAIR]"))
    write = rng.choice(("PAIR[0], PAIR[1] = a - d, b + d", "PAIR[:] = [a - d, b + d]",
                        "TMP[:] = [a - d, b + d]\nPAIR[:] = TMP",
                        "PAIR.clear()\nPAIR.extend([a - d, b + d])",
                        "PAIR.append(b + d)\nPAIR.pop(0)\nPAIR.insert(0, a - d)\nPAIR.pop(1)",
                        "PAIR[0:1] = [a - d]\nPAIR[1:] = [b + d]",
                        f"PAIR[0] = a - d\n_spin({spin})\nPAIR[1] = b + d"))
    view = rng.choice(("a, b = PAIR", "text = f'{PAIR[0]},{PAIR[1]}'\na, b = map(int, text.split(','))",
                       "text = '%d,%d' % tuple(PAIR)\na, b = map(int, text.split(','))",
                       "text = f'{PAIR}'\na, b = map(int, text.strip('[]').split(', '))",
                       "text = str(PAIR)\na, b = map(int, text.strip('[]').split(', '))",
                       "a, b = sorted(PAIR)", "a, b = max(PAIR), min(PAIR)",
                       f"a = PAIR[0]\n_spin({spin})\nb = PAIR[1]"))
    own = rng.choice(("", "if PAIR[0] + PAIR[1] != TOTAL:\n    _torn('own write: PAIR sums to %r' % (PAIR[0] + PAIR[1],))",
                      "if f'{PAIR}' != f'[{a - d}, {b + d}]':\n    _torn('f-string of PAIR %s misses own write' % (f'{PAIR}',))",
                      "if [*PAIR] != [a - d, b + d]:\n    _torn('[*PAIR] misses own write')",
                      "x, y = PAIR\nif (x, y) != (a - d, b + d):\n    _torn('unpacking misses own write')"))
    op_move = _def("op_move", read, "d = 1 + i % 5", f"_spin({spin})", write, "MOVED[0] += d", own)
    op_view = _def("op_view", view,
                   "if a + b != TOTAL:\n    _torn('pair sums to %r' % (a + b,))")
    check = _check(
                   "if len(PAIR) != 2 or sum(PAIR) != TOTAL or PAIR[0] != 100 - MOVED[0]:\n"
                   "    problems.append('final PAIR %r, moved %r' % (PAIR, MOVED[0]))")
    body = "TOTAL = 200\nPAIR = [100, 100]\nTMP = [0, 0]\nMOVED = [0]\n\n\n" + op_move + "\n\n" + op_view \
        + "\n\n" + check
    variant = f"read={read!r} write={write!r} view={view!r} own={own.splitlines()[0] if own else ''!r}"
    return variant, body, ["op_move", "op_view"], False, True


# -- lazy: iterators over shared containers consumed after later writes --------

def lazy(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    kind = rng.choice(("list", "dict"))
    spin = rng.choice(SPINS)
    own = rng.random() < 0.6
    if kind == "list":
        state = "N = 5\nTOTAL = 500\nL = [100] * N\nM = [100] * N"
        lazy_form = rng.choice(("enumerate", "iter", "map", "genexp", "zip", "reversed", "filter",
                                "slice_iter"))
        make = {"enumerate": "it = enumerate(L)", "iter": "it = iter(L)",
                "map": "it = map(int, L)", "genexp": "it = (x for x in L)",
                "zip": "it = zip(L, M)", "reversed": "it = reversed(L)",
                "filter": "it = filter(lambda x: True, L)",
                "slice_iter": "it = (L[j] for j in range(N))"}[lazy_form]
        consume = {"enumerate": "total = sum(v for _, v in it)",
                   "zip": "pairs = list(it)\ntotal = sum(x for x, _ in pairs)\n"
                          "if any(x != y for x, y in pairs):\n    _torn('zip(L, M) saw L != M')"
                   }.get(lazy_form, "total = sum(it)")
        transfer = ["x = L[a]", "L[a] = x - amt", "M[a] = x - amt", "L[b] += amt", "M[b] += amt"]
        final = "sum(L)"
        extra = "if L != M:\n    problems.append('final L != M')"
    else:
        state = ("N = 5\nTOTAL = 500\nKEYS = tuple('k%d' % j for j in range(N))\n"
                 "D = {k: 100 for k in KEYS}")
        lazy_form = rng.choice(("values", "items", "iter_values", "genexp", "map_get", "keys"))
        make = {"values": "it = D.values()", "items": "it = D.items()",
                "iter_values": "it = iter(D.values())", "genexp": "it = (D[k] for k in D)",
                "map_get": "it = map(D.get, KEYS)", "keys": "it = iter(D.keys())"}[lazy_form]
        consume = {"items": "total = sum(v for _, v in it)",
                   "keys": "total = sum(D[k] for k in it)"}.get(lazy_form, "total = sum(it)")
        transfer = ["a = KEYS[a]", "b = KEYS[b]", "x = D[a]", "D[a] = x - amt", "D[b] += amt"]
        final = "sum(D.values())"
        extra = ""
    pick = ["a = i % N", "b = (a + 2) % N", "amt = 1 + i % 9"]
    view_lines = [make] + (pick + transfer if own else []) + [f"_spin({spin})", consume,
                                                               "if total != TOTAL:\n"
                                                               "    _torn('lazy iterator summed %r' % (total,))"]
    op_view = _def("op_view", *view_lines)
    mv = list(transfer)
    mv.insert(2 if kind == "list" else 4, f"_spin({spin})")
    op_move = _def("op_move", *pick, *mv)
    check = _check(f"total = {final}",
                   "if total != TOTAL:\n    problems.append('final total %r' % (total,))",
                   extra)
    body = state + "\n\n\n" + op_view + "\n\n" + op_move + "\n\n" + check
    variant = f"kind={kind} lazy={lazy_form} own_write_before_consume={own} spin={spin}"
    return variant, body, ["op_view", "op_move", "op_move"], False, True


# -- collections types ---------------------------------------------------------

def ordereddict(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    cap = rng.choice((2, 3, 4))
    space = rng.choice((4, 6))
    spin = rng.choice(SPINS)
    evict = rng.choice(("OD.popitem(last=False)", "OD.popitem(False)",
                        "k2 = next(iter(OD))\nv2 = OD.pop(k2)\nk2, v2 = k2, v2"))
    if not evict.startswith("k2"):
        evict = f"k2, v2 = {evict}"
    touch_hit = rng.choice(("OD.move_to_end(k)\nOD[k] += 1", "OD[k] = OD[k] + 1\nOD.move_to_end(k)",
                            "v = OD.pop(k)\nOD[k] = v + 1"))
    op_touch = _def("op_touch", f"k = i % {space}",
                    "if k in OD:\n" + _block(touch_hit),
                    "else:\n" + _block("OD[k] = 1", "META['n'] += 1", f"_spin({spin})",
                                       "if len(OD) > CAP:\n" + _block(evict, "META['n'] -= 1",
                                                                       "META['evicted'] += v2")))
    op_scan = _def("op_scan", "if len(OD) != META['n']:\n    _torn('len(OD) != META[n]')",
                   "if len(OD) > CAP:\n    _torn('OD over capacity')",
                   f"_spin({spin})",
                   "keys = [*OD]",
                   "if len(set(keys)) != len(keys) or len(keys) != len(OD):\n"
                   "    _torn('OD keys %r' % (keys,))")
    check = _check(
                   "if len(OD) != META['n'] or len(OD) > CAP:\n"
                   "    problems.append('len(OD)=%d META=%r' % (len(OD), META))",
                   "if sum(OD.values()) + META['evicted'] != calls.get('op_touch', 0):\n"
                   "    problems.append('touches lost: %d + %d != %d' % (sum(OD.values()), "
                   "META['evicted'], calls.get('op_touch', 0)))")
    body = (f"CAP = {cap}\nOD = OrderedDict()\nMETA = {{'n': 0, 'evicted': 0}}\n\n\n"
            + op_touch + "\n\n" + op_scan + "\n\n" + check)
    variant = f"cap={cap} space={space} evict={evict!r} hit={touch_hit!r} spin={spin}"
    return variant, body, ["op_touch", "op_touch", "op_scan"], False, True


def counter(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    spin = rng.choice(SPINS)
    k = rng.choice((1, 2, 3))
    add = rng.choice(("C.update(words)", "C.update({w: 1 for w in words})",
                      "for w in words:\n    C[w] += 1", "C.update(Counter(words))",
                      "global C\nC = C + Counter(words)"))
    take = rng.choice(("C.subtract([w])", "C[w] -= 1", "C.update({w: -1})",
                       "C.subtract(Counter([w]))"))
    audit = rng.choice(("sum(C.values())", "C.total()", "sum(c for _, c in C.items())",
                        "sum(C[w] for w in list(C))"))
    op_add = _def("op_add", f"words = ['w%d' % ((i + j) % 5) for j in range({k})]",
                  add, f"_spin({spin})", f"META['n'] += {k}")
    op_take = _def("op_take", "top = C.most_common(1)",
                   "if top and top[0][1] > 0:\n" + _block("w = top[0][0]", take, f"_spin({spin})",
                                                           "META['n'] -= 1"))
    op_audit = _def("op_audit", f"total = {audit}",
                    "if total != META['n']:\n    _torn('Counter total %r != %r' % (total, META['n']))")
    check = _check(
                   "if sum(C.values()) != META['n']:\n"
                   "    problems.append('final Counter total %r != %r' % (sum(C.values()), META['n']))")
    body = "C = Counter()\nMETA = {'n': 0}\n\n\n" + op_add + "\n\n" + op_take + "\n\n" + op_audit \
        + "\n\n" + check
    variant = f"k={k} add={add!r} take={take!r} audit={audit!r} spin={spin}"
    return variant, body, ["op_add", "op_add", "op_take", "op_audit"], False, True


def deque_family(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    spin = rng.choice(SPINS)
    push = rng.choice(("DQ.append(v)", "DQ.appendleft(v)", "DQ.extend([v])", "DQ += [v]"))
    pop = rng.choice(("x = DQ.popleft()", "x = DQ.pop()", "x = DQ[0]\ndel DQ[0]"))
    guard = rng.choice(("if DQ:", "if len(DQ) > 0:", "if not not DQ:"))
    rot = rng.choice(("DQ.rotate(1 + i % 3)", "DQ.rotate(-1)", "DQ.reverse()",
                      "DQ.append(DQ.popleft()) if DQ else None"))
    audit = rng.choice(("sum(DQ)", "sum([*DQ])", "sum(list(DQ))", "sum(x for x in DQ)"))
    push_op = "global DQ\n" + push if push.startswith("DQ +=") else push
    op_push = _def("op_push", "v = 1 + i % 10", push_op, f"_spin({spin})", "META['sum'] += v")
    op_pop = _def("op_pop", guard + "\n" + _block(pop, f"_spin({spin})", "META['sum'] -= x"))
    op_rotate = _def("op_rotate", rot)
    op_audit = _def("op_audit", f"total = {audit}",
                    "if total != META['sum']:\n    _torn('deque sums to %r, META %r' % (total, META['sum']))")
    check = _check(
                   "if sum(DQ) != META['sum']:\n"
                   "    problems.append('final deque sum %r != %r' % (sum(DQ), META['sum']))")
    body = "DQ = deque([1, 2, 3])\nMETA = {'sum': 6}\n\n\n" + op_push + "\n\n" + op_pop + "\n\n" \
        + op_rotate + "\n\n" + op_audit + "\n\n" + check
    variant = f"push={push!r} pop={pop!r} guard={guard!r} rotate={rot!r} audit={audit!r} spin={spin}"
    return variant, body, ["op_push", "op_pop", "op_rotate", "op_audit", "op_push"], False, True


#: C code looking up a missing key of the shared ``DD`` (it inserts it).
_DD_LOOKUPS = ("operator.getitem(DD, key)", "('%%(%s)s' % key) % DD",
               "('{%s}' % key).format_map(DD)", "DD.__getitem__(key)",
               "list(map(DD.__getitem__, [key]))", "operator.itemgetter(key)(DD)")


def defaultdict_family(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    if rng.random() < 0.4:
        return _defaultdict_lookups(rng)
    spin = rng.choice(SPINS)
    kind = rng.choice(("int", "list", "set"))
    keys = rng.choice((2, 5))
    inc = {"int": ("DD[k] += 1", "DD[k] = DD[k] + 1"),
           "list": ("DD[k].append(i)", "DD[k] += [i]", "DD[k].extend([i])"),
           "set": ("DD[k].add(i)", "DD[k] |= {i}")}[kind]
    inc = rng.choice(inc)
    size = {"int": "sum(DD.values())", "list": "sum(len(v) for v in DD.values())",
            "set": "sum(map(len, DD.values()))"}[kind]
    op_inc = _def("op_inc", f"k = i % {keys}", inc, f"_spin({spin})", "META['n'] += 1")
    op_audit = _def("op_audit", f"total = {size}",
                    "if total != META['n']:\n    _torn('defaultdict holds %r, META %r' % (total, META['n']))")
    check = _check(f"total = {size}",
                   "if total != META['n'] or META['n'] != calls.get('op_inc', 0):\n"
                   "    problems.append('defaultdict holds %r, META %r, calls %r' % "
                   "(total, META['n'], calls.get('op_inc', 0)))")
    body = f"DD = defaultdict({kind})\nMETA = {{'n': 0}}\n\n\n" + op_inc + "\n\n" + op_audit \
        + "\n\n" + check
    variant = f"kind={kind} inc={inc!r} keys={keys} spin={spin}"
    return variant, body, ["op_inc", "op_inc", "op_audit"], False, True


def _defaultdict_lookups(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    """Each call inserts one new key by a lookup that C code makes (operator.getitem,
    % formatting, format_map...), some after turning inevitable: len(DD) counts them."""
    spin = rng.choice(SPINS)
    lookup = rng.choice(_DD_LOOKUPS)
    inevitable = rng.random() < 0.5
    op_insert = _def("op_insert", "n = META['n']", "key = 'k%d' % n",
                     *(["if i % 3 == 0:\n    effects.note(i)"] if inevitable else []),
                     lookup, f"_spin({spin})", "META['n'] = n + 1")
    op_audit = _def("op_audit", "if len(DD) != META['n']:\n"
                    "    _torn('defaultdict has %r keys, META %r' % (len(DD), META['n']))")
    check = _check("if len(DD) != META['n'] or META['n'] != calls.get('op_insert', 0):\n"
                   "    problems.append('defaultdict has %r keys, META %r, calls %r' % "
                   "(len(DD), META['n'], calls.get('op_insert', 0)))")
    body = ("import operator\n\nDD = defaultdict(int)\nMETA = {'n': 0}\n\n\n" + op_insert
            + "\n\n" + op_audit + "\n\n" + check)
    variant = f"lookup={lookup!r} inevitable={inevitable} spin={spin}"
    return variant, body, ["op_insert", "op_insert", "op_audit"], False, True


# -- objects: __slots__, properties, class attributes --------------------------

def objects(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    spin = rng.choice(SPINS)
    slots = rng.random() < 0.5
    via = rng.choice(("property", "direct", "method"))
    cls = ("class Gauge:\n"
           + ("    __slots__ = ('_lo', '_hi', 'moves')\n" if slots else "")
           + "    def __init__(self):\n        self._lo = 0\n        self._hi = WIDTH\n"
             "        self.moves = 0\n"
             "    @property\n    def lo(self):\n        return self._lo\n"
             "    @lo.setter\n    def lo(self, value):\n        self._lo = value\n"
             f"        _spin({spin})\n        self._hi = value + WIDTH\n"
             "    @property\n    def span(self):\n        return self._hi - self._lo\n"
             "    def shift(self, by):\n        lo = self._lo\n"
             f"        _spin({spin})\n        self._lo = lo + by\n        self._hi = lo + by + WIDTH\n")
    shift = {"property": "G.lo = G.lo + 1", "direct": f"v = G._lo\n_spin({spin})\nG._lo = v + 1\n"
             "G._hi = v + 1 + WIDTH", "method": "G.shift(1)"}[via]
    op_shift = _def("op_shift", shift, "G.moves += 1")
    read = rng.choice(("G.span", "G._hi - G._lo", "(lambda g: g._hi - g._lo)(G)"))
    op_read = _def("op_read", f"span = {read}",
                   "if span != WIDTH:\n    _torn('Gauge span %r' % (span,))",
                   "if G._lo != G.moves:\n    _torn('lo %r != moves %r' % (G._lo, G.moves))")
    check = _check(
                   "if G.span != WIDTH or G._lo != calls.get('op_shift', 0) or G.moves != G._lo:\n"
                   "    problems.append('final lo=%r hi=%r moves=%r shifts=%r' % "
                   "(G._lo, G._hi, G.moves, calls.get('op_shift', 0)))")
    body = "WIDTH = 10\n\n\n" + cls + "\n\nG = Gauge()\n\n\n" + op_shift + "\n\n" + op_read \
        + "\n\n" + check
    variant = f"slots={slots} via={via} read={read!r} spin={spin}"
    return variant, body, ["op_shift", "op_read"], False, True


def classattr(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    spin = rng.choice(SPINS)
    read_cls, write_cls = rng.choice((("Base", "Base"), ("Sub", "Base"), ("Base", "Sub.__base__"),
                                      ("Sub", "Sub.__mro__[1]"), ("Other", "Base")))
    op_bump = _def("op_bump", f"v = {read_cls}.hits", f"_spin({spin})",
                   f"{write_cls}.hits = v + 1", f"{write_cls}.total = {read_cls}.total + 2")
    reader = rng.choice(("Sub", "Other", "Base", "Sub()", "Other()"))
    op_read = _def("op_read", f"obj = {reader}", "h = obj.hits", f"_spin({spin // 3})",
                   "t = obj.total",
                   "if t != 2 * h:\n    _torn('%s: total %r != 2 * hits %r' % "
                   f"({reader!r}, t, h))")
    check = _check(
                   "if Base.hits != calls.get('op_bump', 0) or Base.total != 2 * Base.hits:\n"
                   "    problems.append('final Base.hits=%r total=%r bumps=%r' % "
                   "(Base.hits, Base.total, calls.get('op_bump', 0)))",
                   "if 'hits' in vars(Sub) or 'hits' in vars(Other):\n"
                   "    problems.append('a subclass got its own hits')")
    body = ("class Base:\n    hits = 0\n    total = 0\n\n\nclass Sub(Base):\n    pass\n\n\n"
            "class Other(Sub):\n    pass\n\n\n" + op_bump + "\n\n" + op_read + "\n\n" + check)
    variant = f"read={read_cls} write={write_cls} reader={reader} spin={spin}"
    return variant, body, ["op_bump", "op_read", "op_bump"], False, True


# -- module globals and closures ----------------------------------------------

def globals_family(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    spin = rng.choice(SPINS)
    seq = rng.choice(("list", "tuple"))
    add_form = rng.choice(("plus", "augment"))
    add_seq = {("list", "plus"): "L = L + [i]", ("list", "augment"): "L += [i]",
               ("tuple", "plus"): "L = L + (i,)", ("tuple", "augment"): "L += (i,)"}[(seq, add_form)]
    add_set = rng.choice(("S = S | {i}", "S = S.union({i})", "S = frozenset([*S, i])"))
    op_inc = _def("op_inc", "global COUNT", "v = COUNT", f"_spin({spin})", "COUNT = v + 1")
    op_move = _def("op_move", "global A, B", "d = 1 + i % 4", "a = A", f"_spin({spin})",
                   "A = a - d", "B = B + d")
    op_add = _def("op_add", "global L, S", add_seq, f"_spin({spin})", add_set)
    op_drop = _def("op_drop", "global L, S", "if S:\n" + _block(
        "x = max(S)", "S = S - {x}", f"_spin({spin})",
        "L = type(L)(y for y in L if y != x)" if seq == "tuple" else "L = [y for y in L if y != x]"))
    op_read = _def("op_read", "if A + B != TOTAL:\n    _torn('A + B = %r' % (A + B,))",
                   "if len(L) != len(S):\n    _torn('len(L) %d != len(S) %d' % (len(L), len(S)))",
                   "if sorted(L) != sorted(S):\n    _torn('L and S differ')")
    check = _check(
                   "if COUNT != calls.get('op_inc', 0):\n"
                   "    problems.append('COUNT %r != %r increments' % (COUNT, calls.get('op_inc', 0)))",
                   "if A + B != TOTAL:\n    problems.append('final A + B = %r' % (A + B,))",
                   "if sorted(L) != sorted(S) or len(set(L)) != len(L):\n"
                   "    problems.append('final L %r vs S %r' % (L, S))")
    init_l = "[]" if seq == "list" else "()"
    body = (f"COUNT = 0\nTOTAL = 200\nA = 100\nB = 100\nL = {init_l}\nS = frozenset()\n\n\n"
            + op_inc + "\n\n" + op_move + "\n\n" + op_add + "\n\n" + op_drop + "\n\n" + op_read
            + "\n\n" + check)
    variant = f"seq={seq} add={add_seq!r} set={add_set!r} spin={spin}"
    return variant, body, ["op_inc", "op_move", "op_add", "op_read", "op_inc", "op_drop"], \
        False, True


def closures(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    spin = rng.choice(SPINS)
    bump = rng.choice(("v = hits\n_spin(SPIN)\nhits = v + 1\nlo = lo + 1\n_spin(SPIN)\nhi = hi + 1",
                       "hits += 1\nlo += 1\n_spin(SPIN)\nhi += 1",
                       "lo, hi = lo + 1, hi + 1\nv = hits\n_spin(SPIN)\nhits = v + 1"))
    factory = ("def _make():\n    hits = 0\n    lo, hi = 0, WIDTH\n\n"
               "    def bump():\n        nonlocal hits, lo, hi\n"
               + _block(bump, indent=2) + "\n\n"
               "    def peek():\n        return hits, lo, hi\n\n    return bump, peek\n")
    op_bump = _def("op_bump", "BUMP()")
    op_read = _def("op_read", "h, lo, hi = PEEK()",
                   "if hi - lo != WIDTH or lo != h:\n    _torn('closure state %r' % ((h, lo, hi),))")
    check = _check("h, lo, hi = PEEK()",
                   "if h != calls.get('op_bump', 0) or hi - lo != WIDTH or lo != h:\n"
                   "    problems.append('final closure state %r, bumps %r' % ((h, lo, hi), "
                   "calls.get('op_bump', 0)))")
    body = (f"WIDTH = 10\nSPIN = {spin}\n\n\n" + factory + "\n\nBUMP, PEEK = _make()\n\n\n" + op_bump
            + "\n\n" + op_read + "\n\n" + check)
    variant = f"bump={bump.splitlines()[0]!r} spin={spin}"
    return variant, body, ["op_bump", "op_bump", "op_read"], False, True


# -- exceptions after writes ---------------------------------------------------

def exceptions(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    spin = rng.choice(SPINS)
    where = rng.choice(("uncaught", "caught", "caught_builtin", "finally"))
    common = ["LEDGER['attempts'] += 1", "a = i % N", "b = (a + 1) % N", "amt = 1 + i % 5",
              "ACC[a] -= amt", f"_spin({spin})", "ACC[b] += amt"]
    if where == "uncaught":
        work = _def("op_work", *common, "if i % 3 == 0:\n    raise Planned(i)", "LEDGER['done'] += 1")
        raises = True
    elif where == "caught":
        work = _def("op_work", "try:\n" + _block(*common, "if i % 3 == 0:\n    raise Planned(i)",
                                                  "LEDGER['done'] += 1"),
                    "except Planned:\n    LEDGER['caught'] += 1")
        raises = False
    elif where == "caught_builtin":
        work = _def("op_work", "try:\n" + _block(*common, "if i % 3 == 0:\n    1 // (i * 0)",
                                                  "LEDGER['done'] += 1"),
                    "except ZeroDivisionError:\n    LEDGER['caught'] += 1")
        raises = False
    else:
        work = _def("op_work", "try:\n" + _block(*common, "if i % 3 == 0:\n    raise Planned(i)",
                                                  "LEDGER['done'] += 1"),
                    "finally:\n    LEDGER['closed'] += 1")
        raises = True
    op_read = _def("op_read", "total = sum(ACC)",
                   "if total != TOTAL:\n    _torn('sum(ACC) = %r' % (total,))")
    check = _check("n = calls.get('op_work', 0)",
                   "if sum(ACC) != TOTAL:\n    problems.append('final sum(ACC) %r' % (sum(ACC),))",
                   "if LEDGER['attempts'] != n:\n"
                   "    problems.append('attempts %r != calls %r: writes before an exception were "
                   "lost' % (LEDGER['attempts'], n))",
                   "if LEDGER['done'] + LEDGER['caught'] + calls.get('_planned', 0) != n:\n"
                   "    problems.append('done %r + caught %r + raised %r != %r' % (LEDGER['done'], "
                   "LEDGER['caught'], calls.get('_planned', 0), n))",
                   f"if {where == 'finally'} and LEDGER['closed'] != n:\n"
                   "    problems.append('finally ran %r times, %r calls' % (LEDGER['closed'], n))")
    body = ("N = 4\nTOTAL = 400\nACC = [100] * N\n"
            "LEDGER = {'attempts': 0, 'done': 0, 'caught': 0, 'closed': 0}\n\n\n"
            + work + "\n\n" + op_read + "\n\n" + check)
    return f"where={where} spin={spin}", body, ["op_work", "op_work", "op_read"], raises, not raises


# -- sections that become inevitable mid-way -----------------------------------

def inevitable(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    spin = rng.choice(SPINS)
    effect = rng.choice(("print(i, file=SINK)", "time.sleep(0)", "effects.note(i)",
                         "SINK.write(str(i))", "print(f'{ACC}', file=SINK)"))
    kind = rng.choice(("list", "dict"))
    if kind == "list":
        state = "N = 4\nTOTAL = 400\nACC = [100] * N\nLOG = []"
        keys = ["a = i % N", "b = (a + 1) % N"]
        audit = rng.choice(("total = sum(ACC)",
                            f"total = 0\nfor j in range(N):\n    total += ACC[j]\n    _spin({spin // 3})",
                            "total = sum([*ACC])", "w, x, y, z = ACC\ntotal = w + x + y + z",
                            "total = sum(v for _, v in enumerate(ACC))",
                            "total = sum(map(int, f'{ACC}'.strip('[]').split(', ')))",
                            "total = sum(ACC + [])", "total = sum(sorted(ACC))"))
    else:
        state = "N = 4\nTOTAL = 400\nKEYS = ('w', 'x', 'y', 'z')\nACC = dict.fromkeys(KEYS, 100)\nLOG = []"
        keys = ["a = KEYS[i % N]", "b = KEYS[(i + 1) % N]"]
        audit = rng.choice(("total = sum(ACC.values())",
                            f"total = 0\nfor k in KEYS:\n    total += ACC[k]\n    _spin({spin // 3})",
                            "total = sum({**ACC}.values())", "total = sum(v for _, v in ACC.items())",
                            "total = sum(map(ACC.get, KEYS))", "total = sum(dict(ACC).values())",
                            "total = sum((ACC | {}).values())"))
    op_work = _def("op_work", *keys, "amt = 1 + i % 5", "x = ACC[a]", "ACC[a] = x - amt",
                   f"_spin({spin})", effect, f"_spin({spin})", "ACC[b] = ACC[b] + amt",
                   "LOG.append(i)",
                   "if ACC[a] != x - amt:\n    _torn('own write lost after becoming inevitable')")
    op_audit = _def("op_audit", audit, "if total != TOTAL:\n    _torn('audit saw %r' % (total,))")
    check = _check(
                   "total = sum(ACC.values() if isinstance(ACC, dict) else ACC)",
                   "if total != TOTAL:\n    problems.append('final total %r' % (total,))",
                   "if len(LOG) != calls.get('op_work', 0):\n"
                   "    problems.append('LOG has %d entries for %d calls' % (len(LOG), "
                   "calls.get('op_work', 0)))")
    body = state + "\n\n\n" + op_work + "\n\n" + op_audit + "\n\n" + check
    return f"kind={kind} effect={effect!r} spin={spin}", body, \
        ["op_work", "op_audit", "op_audit"], False, True


# -- uninstrumented calls given shared containers ------------------------------

def calls(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    spin = rng.choice(SPINS)
    mv_list = rng.choice(("SRC.append(i)\nDST.extend(SRC)\nSRC.clear()",
                          "SRC.append(i)\nDST[len(DST):] = SRC\ndel SRC[:]",
                          "SRC.append(i)\nDST += SRC\nSRC.clear()",
                          "SRC.append(i)\nDST[:] = DST + SRC\nSRC[:] = []",
                          "SRC.append(i)\nDST.extend(sorted(SRC))\nSRC.clear()",
                          "SRC.append(i)\nDST.extend([*SRC])\nSRC.clear()"))
    mv_dict = rng.choice(("OTHER[i] = i\nD.update(OTHER)\nOTHER.clear()",
                          "OTHER[i] = i\nD |= OTHER\nOTHER.clear()",
                          "OTHER[i] = i\nD.update(**{str(k): v for k, v in OTHER.items()})\nOTHER.clear()",
                          "OTHER[i] = i\nD.update(dict(OTHER))\nOTHER.clear()"))
    mv_set = rng.choice(("T.add(i)\nS = S.union(T)\nT.clear()", "T.add(i)\nS.update(T)\nT.clear()",
                         "T.add(i)\nS |= T\nT.clear()", "T.add(i)\nS = S | T\nT.clear()",
                         "T.add(i)\nS = set([*S, *T])\nT.clear()"))
    glob_set = "global S\n" if ("S = " in mv_set or "S |=" in mv_set) else ""
    lines_l = mv_list.split("\n")
    lines_l.insert(1, f"_spin({spin})")
    lines_d = mv_dict.split("\n")
    lines_d.insert(1, f"_spin({spin})")
    lines_s = mv_set.split("\n")
    lines_s.insert(1, f"_spin({spin})")
    op_list = _def("op_list", ("global DST\n" if "DST +=" in mv_list else "") + "\n".join(lines_l))
    op_dict = _def("op_dict", ("global D\n" if "D |=" in mv_dict else "") + "\n".join(lines_d))
    op_set = _def("op_set", glob_set + "\n".join(lines_s))
    op_read = _def("op_read", "if SRC or OTHER or T:\n    _torn('a staging container is not empty')",
                   "if len(set(DST)) != len(DST):\n    _torn('DST holds a duplicate')")
    check = _check(
                   "if SRC or OTHER or T:\n    problems.append('staging not empty: %r %r %r' % "
                   "(SRC, OTHER, T))",
                   "if sorted(DST) != sorted(set(DST)) or len(DST) != calls.get('op_list', 0):\n"
                   "    problems.append('DST has %d items for %d calls' % (len(DST), "
                   "calls.get('op_list', 0)))",
                   "if len(D) != calls.get('op_dict', 0):\n"
                   "    problems.append('D has %d keys for %d calls' % (len(D), calls.get('op_dict', 0)))",
                   "if len(S) != calls.get('op_set', 0):\n"
                   "    problems.append('S has %d items for %d calls' % (len(S), calls.get('op_set', 0)))")
    body = ("SRC = []\nDST = []\nOTHER = {}\nD = {}\nT = set()\nS = set()\n\n\n" + op_list + "\n\n"
            + op_dict + "\n\n" + op_set + "\n\n" + op_read + "\n\n" + check)
    variant = f"list={mv_list!r} dict={mv_dict!r} set={mv_set!r} spin={spin}"
    return variant, body, ["op_list", "op_dict", "op_set", "op_read"], False, True


# -- readers: plain code that reads shared state behind the barriers' back -------

#: Per holder: its state, the two halves as the barriers read them, and the
#: forms in which uninstrumented code (or a construct the rewriter must
#: handle specially) reads both halves into a and b.
_HOLDERS: dict[str, tuple[str, tuple[str, str], tuple[str, ...]]] = {
    "object": (
        "class Acct:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n\n\n"
        "H = Acct(100, 100)",
        ("H.a", "H.b"),
        ("c = copy.copy(H)\na, b = c.a, c.b", "a, b = operator.attrgetter('a', 'b')(H)",
         "match H:\n    case Acct(a=a, b=b):\n        pass",
         "a = max([H], key=operator.attrgetter('a')).a\nb = H.b")),
    "dataclass": (
        "@dataclasses.dataclass\nclass Pt:\n    a: int\n    b: int\n\n\nH = Pt(100, 100)",
        ("H.a", "H.b"),
        ("a, b = map(int, re.findall(r'-?\\d+', repr(H)))",
         "a, b = map(int, re.findall(r'-?\\d+', f'{H}'))",
         "c = copy.copy(H)\na, b = c.a, c.b",
         "a, b = H.a, H.b\nif H != Pt(a, b):\n    _torn('dataclass == disagrees with its fields')")),
    "pairs": (
        "H = [[100, 100]]",
        ("H[0][0]", "H[0][1]"),
        ("[(a, b)] = [(x, y) for x, y in H]", "[(a, b)] = [(x, y) for [x, y] in H if x or y]",
         "match H:\n    case [[a, b]]:\n        pass",
         "((a, b),) = tuple((x, y) for x, y in H)")),
    "view": (
        "D = {'a': 100, 'b': 100}\nH = D.values()",
        ("D['a']", "D['b']"),
        ("a, b = H", "a, b = list(H)", "a, b = [v for v in H]",
         "match D:\n    case {'a': a, 'b': b}:\n        pass",
         "a, b = (v for v in H)")),
    "namedtuple": (
        "@dataclasses.dataclass\nclass Acct:\n    v: int\n\n\n"
        "Pair = collections.namedtuple('Pair', 'x y')\nH = Pair(Acct(100), Acct(100))",
        ("H.x.v", "H.y.v"),
        ("a, b = map(int, re.findall(r'-?\\d+', repr(H)))",
         "a, b = map(int, re.findall(r'-?\\d+', f'{H}'))",
         "a, b = map(int, re.findall(r'-?\\d+', '%s' % (H,)))",
         "a, b = map(int, re.findall(r'-?\\d+', str([H])))")),
    "exception": (
        "H = ValueError('halves', [100, 100])",
        ("H.args[1][0]", "H.args[1][1]"),
        ("a, b = map(int, re.findall(r'-?\\d+', str(H)))",
         "a, b = map(int, re.findall(r'-?\\d+', repr(H)))",
         "a, b = map(int, re.findall(r'-?\\d+', f'{H}'))",
         "a, b = map(int, re.findall(r'-?\\d+', '%s' % (H,)))")),
    "array": (
        "H = array.array('q', [100, 100])",
        ("H[0]", "H[1]"),
        ("a, b = H", "a, b = H.tolist()", "a, b = list(H)", "a, b = [v for v in H]",
         "a, b = int.from_bytes(bytes(H)[:8], sys.byteorder, signed=True), H[1]")),
}


def readers(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    holder = rng.choice(sorted(_HOLDERS))
    state, (first, second), forms = _HOLDERS[holder]
    read = rng.choice(forms)
    spin = rng.choice(SPINS)
    own = rng.random() < 0.5
    move = [f"d = 1 + i % 5", f"{first} -= d", f"_spin({spin})", f"{second} += d", "MOVED[0] += d"]
    if own:
        # the section reads its own half-done transfer back through the same form
        move += [read, f"if (a, b) != ({first}, {second}):\n"
                       "    _torn('own write missed: read %r' % ((a, b),))"]
    op_move = _def("op_move", *move)
    op_view = _def("op_view", read, "if a + b != TOTAL:\n    _torn('halves sum to %r' % (a + b,))")
    check = _check(f"if ({first}, {second}) != (100 - MOVED[0], 100 + MOVED[0]):\n"
                   f"    problems.append('final %r, moved %r' % (({first}, {second}), MOVED[0]))")
    body = ("import array\nimport collections\nimport copy\nimport dataclasses\n"
            "import operator\nimport re\n"
            "import sys\n\nTOTAL = 200\nMOVED = [0]\n" + state + "\n\n\n" + op_move + "\n\n"
            + op_view + "\n\n" + check)
    variant = f"holder={holder} read={read.splitlines()[0]!r} own={own} spin={spin}"
    return variant, body, ["op_move", "op_view"], False, True


# -- escapes: what a section makes or hands out, seen after it -------------------

#: Views and wrappers of a dict that read it live, and what each sums to.
_KEPT_VIEWS = {"D.values()": "sum(v)", "D.items()": "sum(x for _, x in v)",
               "MappingProxyType(D)": "sum(v.values())", "D.keys()": "len(v) * 0 + TOTAL"}


def _escapes(rng: random.Random, mechanism: str) -> tuple[str, str, list[str], bool, bool]:
    """Objects a section made, or lends, that other sections see later: a pair
    published then filled after the section turned inevitable, a view kept in
    a global, a ``functools.wraps`` counter."""
    spin = rng.choice(SPINS)
    effect = rng.choice(("effects.note(i)", "print(i, file=SINK)"))
    if mechanism == "publish_then_fill":
        state = "CUR = {'pair': [1, 1]}"
        ops = [_def("op_make", rng.choice(("pair = [0, 0]", "pair = [0 for _ in range(2)]")),
                    "CUR['pair'] = pair", effect, "pair[0] = i", f"_spin({spin})",
                    "pair[1] = i"),
               _def("op_read", "pair = CUR['pair']", "x = pair[0]", f"_spin({spin})",
                    "if x != pair[1]:\n    _torn('a half-filled pair: %r' % (pair,))")]
        check = _check("pair = CUR['pair']",
                       "if pair[0] != pair[1]:\n    problems.append('final pair %r' % (pair,))")
        schedule = ["op_make", "op_read", "op_read"]
    elif mechanism == "kept_view":
        view = rng.choice(tuple(_KEPT_VIEWS))
        state = ("from types import MappingProxyType\nN = 4\nTOTAL = 400\n"
                 "D = {k: 100 for k in range(N)}\nKEPT = {}")
        ops = [_def("op_keep", f"KEPT['v'] = {view}"),
               _def("op_move", "a, b = i % N, (i + 1) % N", "amt = 1 + i % 3",
                    "D[a] = D[a] - amt", f"_spin({spin})", "D[b] = D[b] + amt"),
               _def("op_use", "v = KEPT.get('v')",
                    f"if v is not None and {_KEPT_VIEWS[view]} != sum(D.values()):\n"
                    "    _torn('a kept view reads a stale copy')")]
        check = _check("if sum(D.values()) != TOTAL:\n    problems.append('total %r' % "
                       "(sum(D.values()),))")
        schedule = ["op_keep", "op_move", "op_move", "op_use"]
    else:
        state = ("import functools\nCOUNT = {'n': 0}\n\n\ndef counted(f):\n"
                 "    @functools.wraps(f)\n    def wrapper(*args):\n"
                 "        COUNT['n'] += 1\n        return f(*args)\n    return wrapper\n\n\n"
                 "@counted\ndef helper(i):\n    return i")
        ops = [_def("op_call", f"_spin({spin})", "if helper(i) != i:\n    _torn('helper')")]
        check = _check("if COUNT['n'] != calls.get('op_call', 0):\n"
                       "    problems.append('the decorator counted %d of %d calls' % "
                       "(COUNT['n'], calls.get('op_call', 0)))")
        schedule = ["op_call"]
    body = state + "\n\n\n" + "\n\n".join(ops) + "\n\n" + check
    return f"mechanism={mechanism} effect={effect!r} spin={spin}", body, schedule, False, True


# == families that stress ordinary Python the ones above do not cover ==========
#
# Standard library functions run on shared containers (``stdlib``), special
# methods of application classes called by C code (``dunders``), generator
# functions and expressions consumed inside a section (``generators``), and
# class machinery: descriptors, ``__slots__`` along a hierarchy, ``super()``
# chains, metaclass attributes, module objects, nested ``nonlocal`` cells
# (``classes``). Each keeps a conservation invariant that every serial order
# keeps; each write is a read, a busy loop, then the write, so that plain
# threads lose updates.

#: How ``stdlib`` sections sum ``L`` and ``M`` (two lists of ``N`` ints) into ``total``.
_STDLIB_SUMS = (
    "total = sum(itertools.chain(L, M))",
    "total = sum(itertools.chain.from_iterable([L, M]))",
    "total = list(itertools.accumulate(L + M))[-1]",
    "total = functools.reduce(operator.add, itertools.chain(L, M))",
    "total = sum(itertools.islice(itertools.chain(L, M), 2 * N))",
    "total = sum(operator.itemgetter(*range(N))(L)) + sum(operator.itemgetter(*range(N))(M))",
    "a, b = json.loads(json.dumps([L, M]))\ntotal = sum(a) + sum(b)",
    "total = sum(map(int, ','.join(map(str, L + M)).split(',')))",
    "total = sum(sum(g) for _, g in itertools.groupby(itertools.chain(L, M), key=lambda x: x % 2))",
    "total = sum(x for pair in itertools.zip_longest(L, M, fillvalue=0) for x in pair)",
    "snap = copy.deepcopy([L, M])\ntotal = sum(snap[0]) + sum(snap[1])",
    "total = sum(itertools.starmap(operator.add, zip(L, M)))",
    "total = sum(b - a for a, b in itertools.pairwise(itertools.accumulate(itertools.chain([0], L, M))))",
    "total = sum(sorted(itertools.chain(L, M), key=operator.neg))",
    "total = sum(heapq.merge(sorted(L), sorted(M)))",
    "total = sum(collections.ChainMap(dict(enumerate(L)), {}).values()) + sum(M)",
    "total = sum(map(operator.methodcaller('__int__'), L + M))",
    "total = round(statistics.fmean(L + M) * 2 * N)",
)

#: How ``stdlib`` sections move ``amt`` from ``src[a]`` to ``dst[b]``.
_STDLIB_MOVES = (
    "x = src[a]\n_spin(SPIN)\nsrc[a] = x - amt\ndst[b] += amt",
    "x = operator.getitem(src, a)\n_spin(SPIN)\noperator.setitem(src, a, x - amt)\n"
    "operator.setitem(dst, b, operator.getitem(dst, b) + amt)",
    "x = operator.itemgetter(a)(src)\n_spin(SPIN)\nsrc[a] = x - amt\ndst[b] = dst[b] + amt",
    "x = src.__getitem__(a)\n_spin(SPIN)\nsrc.__setitem__(a, x - amt)\n"
    "dst.__setitem__(b, dst.__getitem__(b) + amt)",
    "x = src[a]\n_spin(SPIN)\nfunctools.partial(operator.setitem, src)(a, x - amt)\n"
    "operator.methodcaller('__setitem__', b, dst[b] + amt)(dst)",
    "x = src[a]\n_spin(SPIN)\nsrc[a:a + 1] = itertools.repeat(x - amt, 1)\n"
    "dst[b:b + 1] = map(operator.add, dst[b:b + 1], [amt])",
    "x = copy.copy(src)[a]\n_spin(SPIN)\nsrc[a] = x - amt\ndst[b] = functools.reduce(operator.add, [dst[b], amt])",
)


def stdlib(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    """Shared lists and dicts read and written through the standard library."""
    shape = rng.choice(("heap", "bisect", "chain", "keyed", "chainmap"))
    spin = rng.choice(SPINS)
    imports = ("import bisect\nimport collections\nimport copy\nimport functools\nimport heapq\n"
               "import itertools\nimport json\nimport operator\nimport statistics\n\n"
               f"SPIN = {spin}\n")
    if shape == "heap":
        push = rng.choice(("heapq.heappush(HEAP, v)", "HEAP.append(v)\nheapq.heapify(HEAP)",
                           "heapq.heappush(HEAP, v)\nheapq.heapify(HEAP)"))
        pop = rng.choice(("x = heapq.heappop(HEAP)", "x = heapq.nsmallest(1, HEAP)[0]\n"
                          "HEAP.remove(x)\nheapq.heapify(HEAP)",
                          "x = HEAP[0]\nheapq.heapreplace(HEAP, x + 1)",
                          "x = min(HEAP)\nheapq.heapreplace(HEAP, x)\nx = heapq.heappop(HEAP)"))
        shape_read = rng.choice((
            "ok = all(HEAP[(k - 1) // 2] <= HEAP[k] for k in range(1, len(HEAP)))",
            "ok = heapq.nsmallest(len(HEAP), HEAP) == sorted(HEAP)",
            "ok = min(HEAP, default=0) == (HEAP[0] if HEAP else 0)",
            "ok = sorted(HEAP) == [heapq.heappop(h) for h in [list(HEAP)] for _ in range(len(HEAP))]"))
        count = rng.choice(("n, s = len(HEAP), sum(HEAP)", "n, s = len(HEAP), sum(heapq.nlargest(len(HEAP), HEAP))",
                            "n, s = len(HEAP), functools.reduce(operator.add, HEAP, 0)"))
        state = "HEAP = [5, 1, 9]\nheapq.heapify(HEAP)\nMETA = {'n': 3, 'sum': 15}"
        # heapreplace pops x and pushes x + 1: one more, no fewer
        pop_meta = ("s = META['sum']\n_spin(SPIN)\nMETA['sum'] = s + 1" if "x + 1" in pop else
                    "m = META['n']\n_spin(SPIN)\nMETA['n'] = m - 1\nMETA['sum'] -= x")
        ops = [_def("op_push", "v = 1 + i % 10", "if len(HEAP) < 12:\n" + _block(
                    "m = META['n']", push, "_spin(SPIN)", "META['n'] = m + 1", "META['sum'] += v")),
               _def("op_pop", "if HEAP:\n" + _block(pop, pop_meta)),
               _def("op_audit", count, shape_read,
                    "if not ok:\n    _torn('the heap lost its order: %r' % (HEAP,))",
                    "if (n, s) != (META['n'], META['sum']):\n"
                    "    _torn('heap holds %r, META %r' % ((n, s), META))")]
        check = _check("if len(HEAP) != META['n'] or sum(HEAP) != META['sum']:\n"
                       "    problems.append('final heap %r, META %r' % (HEAP, META))",
                       "if any(HEAP[(k - 1) // 2] > HEAP[k] for k in range(1, len(HEAP))):\n"
                       "    problems.append('final heap out of order %r' % (HEAP,))")
        schedule = ["op_push", "op_push", "op_pop", "op_audit"]
        variant = f"shape=heap push={push!r} pop={pop!r} read={shape_read[:40]!r} count={count!r}"
    elif shape == "bisect":
        insert = rng.choice(("bisect.insort(SORTED, v)", "bisect.insort_left(SORTED, v)",
                             "SORTED.insert(bisect.bisect_right(SORTED, v), v)",
                             "j = bisect.bisect_left(SORTED, v)\n_spin(SPIN)\nSORTED.insert(j, v)",
                             "bisect.insort_right(SORTED, v, lo=0, hi=len(SORTED))"))
        find = rng.choice(("j = bisect.bisect_left(SORTED, v)",
                           "j = SORTED.index(v)",
                           "j = bisect.bisect_right(SORTED, v) - SORTED.count(v)"))
        audit = rng.choice((
            "ok = SORTED == sorted(SORTED)",
            "ok = all(x <= y for x, y in itertools.pairwise(SORTED))",
            "ok = not any(itertools.starmap(operator.gt, itertools.pairwise(SORTED)))",
            "ok = [bisect.bisect_left(SORTED, x) for x in SORTED] == "
            "[SORTED.index(x) for x in SORTED]"))
        total = rng.choice(("s = sum(SORTED)", "s = functools.reduce(operator.add, SORTED, 0)",
                            "s = ([0] + list(itertools.accumulate(SORTED)))[-1]"))
        state = "SORTED = [10, 20, 30]\nMETA = {'n': 3, 'sum': 60}"
        ops = [_def("op_insert", "v = i % 50", "if len(SORTED) < 20:\n" + _block(
                    insert, "m = META['n']", "_spin(SPIN)", "META['n'] = m + 1", "META['sum'] += v")),
               _def("op_remove", "if SORTED:\n" + _block(
                    "v = SORTED[i % len(SORTED)]", find, "_spin(SPIN)",
                    "if SORTED[j] != v:\n    _torn('bisect found %r at %d, not %r' % (SORTED[j], j, v))",
                    "del SORTED[j]", "META['n'] -= 1", "META['sum'] -= v")),
               _def("op_audit", audit, total,
                    "if not ok:\n    _torn('SORTED out of order: %r' % (SORTED,))",
                    "if (len(SORTED), s) != (META['n'], META['sum']):\n"
                    "    _torn('SORTED holds %r, META %r' % ((len(SORTED), s), META))")]
        check = _check("if SORTED != sorted(SORTED) or len(SORTED) != META['n'] "
                       "or sum(SORTED) != META['sum']:\n"
                       "    problems.append('final SORTED %r, META %r' % (SORTED, META))")
        schedule = ["op_insert", "op_insert", "op_remove", "op_audit"]
        variant = f"shape=bisect insert={insert!r} find={find[:40]!r} audit={audit!r} total={total!r}"
    elif shape in ("chain", "chainmap"):
        own = rng.random() < 0.5
        read = rng.choice(_STDLIB_SUMS)
        if shape == "chain":
            state = "N = 4\nTOTAL = 800\nL = [100] * N\nM = [100] * N\nMOVES = [0]"
            move = rng.choice(_STDLIB_MOVES)
            pick = ["a = i % N", "b = (i // 3) % N", "amt = 1 + i % 7",
                    "src, dst = (L, M) if i % 2 else (M, L)"]
            final = "total = sum(L) + sum(M)"
        else:
            read = rng.choice(("total = sum(CM[k] for k in KEYS)", "total = sum(CM.values())",
                               "total = sum(dict(CM).values())", "total = sum(map(CM.get, KEYS))",
                               "total = sum(CM.new_child()[k] for k in KEYS)",
                               "total = sum(v for _, v in CM.items())",
                               "total = sum(operator.itemgetter(*KEYS)(CM))"))
            state = ("N = 4\nTOTAL = 400\nKEYS = ('w', 'x', 'y', 'z')\n"
                     "BASE = dict.fromkeys(KEYS, 100)\nTOP = {}\n"
                     "CM = collections.ChainMap(TOP, BASE)\nMOVES = [0]")
            move = rng.choice(("x = CM[a]\n_spin(SPIN)\nCM[a] = x - amt\nCM[b] = CM[b] + amt",
                               "x = CM.get(a)\n_spin(SPIN)\nCM.update({a: x - amt})\nCM[b] += amt",
                               "x = operator.getitem(CM, a)\n_spin(SPIN)\nCM[a] = x - amt\n"
                               "CM.maps[0][b] = CM[b] + amt"))
            pick = ["a = KEYS[i % N]", "b = KEYS[(i // 3) % N]", "amt = 1 + i % 7"]
            final = "total = sum(CM[k] for k in KEYS)"
        own_lines = ([read, "if total != TOTAL:\n    _torn('own transfer then %r: %r' % "
                            f"({read.splitlines()[-1]!r}, total))"] if own else [])
        ops = [_def("op_move", *pick, move, "n = MOVES[0]", "MOVES[0] = n + 1", *own_lines),
               _def("op_audit", read, "if total != TOTAL:\n    _torn('audit saw %r' % (total,))")]
        check = _check(final, "if total != TOTAL:\n    problems.append('final total %r' % (total,))",
                       "if MOVES[0] != calls.get('op_move', 0):\n"
                       "    problems.append('MOVES %r != %r' % (MOVES[0], calls.get('op_move', 0)))")
        schedule = ["op_move", "op_move", "op_audit"]
        variant = f"shape={shape} move={move.splitlines()[0]!r} read={read!r} own={own}"
    else:  # keyed: sorted/min/max with key functions reading the shared dict
        key = rng.choice(("BAL.get", "BAL.__getitem__", "lambda k: BAL[k]",
                          "lambda k: operator.itemgetter(k)(BAL)",
                          "functools.partial(operator.getitem, BAL)"))
        pick = rng.choice((f"rich = max(KEYS, key={key})\npoor = min(KEYS, key={key})",
                           f"ranked = sorted(KEYS, key={key})\npoor, rich = ranked[0], ranked[-1]",
                           "rich = max(BAL.items(), key=operator.itemgetter(1))[0]\n"
                           "poor = min(BAL.items(), key=operator.itemgetter(1))[0]",
                           f"poor, rich = heapq.nsmallest(1, KEYS, key={key})[0], "
                           f"heapq.nlargest(1, KEYS, key={key})[0]"))
        audit = rng.choice((f"ranked = sorted(KEYS, key={key})\nvals = [BAL[k] for k in ranked]",
                            f"ranked = sorted(BAL, key={key})\nvals = list(map(BAL.get, ranked))",
                            "vals = sorted(BAL.values())",
                            "vals = [v for _, v in sorted(BAL.items(), key=operator.itemgetter(1, 0))]"))
        state = ("N = 4\nTOTAL = 400\nKEYS = ('w', 'x', 'y', 'z')\n"
                 "BAL = {k: 100 - 10 * j for j, k in enumerate(KEYS)}\n"
                 "BAL['w'] += TOTAL - sum(BAL.values())\nMOVES = [0]")
        ops = [_def("op_level", pick, "amt = 1 + i % 4",
                    "if rich != poor and BAL[rich] - BAL[poor] > 2 * amt:\n" + _block(
                        "x = BAL[rich]", "_spin(SPIN)", "BAL[rich] = x - amt", "BAL[poor] += amt",
                        "n = MOVES[0]", "MOVES[0] = n + 1")),
               _def("op_spread", "k = KEYS[i % N]", "j = KEYS[(i + 1) % N]", "amt = 1 + i % 5",
                    "x = BAL[k]", "_spin(SPIN)", "BAL[k] = x + amt", "BAL[j] -= amt"),
               _def("op_audit", audit,
                    "if vals != sorted(vals):\n    _torn('sorted by value, out of order: %r' % (vals,))",
                    "if sum(vals) != TOTAL:\n    _torn('audit saw %r' % (sum(vals),))")]
        check = _check("if sum(BAL.values()) != TOTAL:\n"
                       "    problems.append('final total %r' % (sum(BAL.values()),))")
        schedule = ["op_level", "op_spread", "op_audit"]
        variant = f"shape=keyed pick={pick.splitlines()[0]!r} audit={audit.splitlines()[0]!r}"
    body = imports + state + "\n\n\n" + "\n\n".join(ops) + "\n\n" + check
    return variant + f" spin={spin}", body, schedule, False, True


#: Ways of binding a special method ``name`` whose body is ``expr`` (of ``self``
#: and ``other``): a ``def``, a lambda, a module-level helper, or the helper
#: set on the class after its statement. Each gives (lines before the class,
#: lines in the class body, lines after the class).
def _bind(rng: random.Random, cls: str, name: str, args: str, expr: str,
          forms: tuple[str, ...] = ("def", "lambda", "helper", "after")) -> tuple[str, str, str]:
    form = rng.choice(forms)
    helper = f"_{cls.lower()}{name.strip('_')}"
    if form == "def":
        return "", f"def {name}({args}):\n    return {expr}", ""
    if form == "lambda":
        return "", f"{name} = lambda {args}: {expr}", ""
    before = f"def {helper}({args}):\n    return {expr}\n\n\n"
    if form == "helper":
        return before, f"{name} = {helper}", ""
    return before, "", f"{cls}.{name} = {helper}\n"


def _cls(name: str, header: str, members: list[str], after: list[str], before: list[str]) -> str:
    body = "\n\n".join(m for m in members if m) or "pass"
    return ("".join(before) + f"{header}\n" + _block(body) + "\n\n\n" + "".join(after))


def dunders(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    """Special methods of application classes that read or write shared state,
    called by C code: sorting, ``in``, dict lookups, ``with``, ``bool()``, ``len()``."""
    shape = rng.choice(("ordering", "container", "context", "proxy", "hashkey"))
    spin = rng.choice(SPINS)
    head = f"import functools\nimport heapq\nimport operator\n\nSPIN = {spin}\n\n\n"
    if shape == "ordering":
        total_ordering = rng.random() < 0.3
        # total_ordering needs an ordering method in the class statement
        lt = _bind(rng, "Acct", "__lt__", "self, other", "self.bal < other.bal",
                   ("def", "lambda", "helper") if total_ordering else
                   ("def", "lambda", "helper", "after"))
        members = ["def __init__(self, name, bal):\n    self.name = name\n    self.bal = bal",
                   lt[1]]
        if total_ordering:
            members.append("def __eq__(self, other):\n    return self.bal == other.bal")
            members.append("__hash__ = object.__hash__")
        summing = rng.choice(("radd", "index", "int", "attr"))
        if summing == "radd":
            members.append(_bind(rng, "Acct", "__radd__", "self, other", "other + self.bal",
                                 ("def", "lambda"))[1])
            total = "total = sum(ranked)"
        elif summing == "index":
            members.append("def __index__(self):\n    return self.bal")
            total = "total = sum(map(operator.index, ranked))"
        elif summing == "int":
            members.append("__int__ = lambda self: self.bal")
            total = "total = sum(map(int, ranked))"
        else:
            total = "total = sum(map(operator.attrgetter('bal'), ranked))"
        header = ("@functools.total_ordering\n" if total_ordering else "") + "class Acct:"
        cls = _cls("Acct", header, members, [lt[2]], [lt[0]])
        state = (cls + "N = 4\nTOTAL = 400\nACCTS = [Acct('a%d' % j, 100) for j in range(N)]\n"
                 "MOVES = [0]")
        pick = rng.choice(("rich = max(ACCTS)\npoor = min(ACCTS)",
                           "ranked = sorted(ACCTS)\npoor, rich = ranked[0], ranked[-1]",
                           "poor = heapq.nsmallest(1, ACCTS)[0]\nrich = heapq.nlargest(1, ACCTS)[0]",
                           "ranked = list(ACCTS)\nranked.sort(reverse=True)\nrich, poor = ranked[0], ranked[-1]",
                           "rich = max(ACCTS)\npoor = next(a for a in ACCTS if not (a > rich) and "
                           "all(not (b < a) for b in ACCTS))"))
        # the poorest gives to the richest on odd calls, so balances keep moving
        ops = [_def("op_move", pick, "amt = 1 + i % 4",
                    "if i % 2:\n    rich, poor = poor, rich",
                    "if rich is not poor:\n" + _block(
                        "x = rich.bal", "_spin(SPIN)", "rich.bal = x - amt", "poor.bal += amt",
                        "n = MOVES[0]", "MOVES[0] = n + 1")),
               _def("op_audit", rng.choice(("ranked = sorted(ACCTS)", "ranked = sorted(ACCTS, reverse=True)[::-1]",
                                            "ranked = heapq.nsmallest(N, ACCTS)")),
                    "bals = [a.bal for a in ranked]",
                    "if bals != sorted(bals):\n    _torn('sorted by __lt__, out of order: %r' % (bals,))",
                    total, "if total != TOTAL:\n    _torn('audit saw %r' % (total,))")]
        check = _check("total = sum(a.bal for a in ACCTS)",
                       "if total != TOTAL:\n    problems.append('final total %r' % (total,))")
        schedule = ["op_move", "op_move", "op_audit"]
        variant = (f"shape=ordering lt={lt[1].split(chr(10))[0] or 'after'!r} "
                   f"total_ordering={total_ordering} sum={summing} pick={pick.splitlines()[0]!r}")
    elif shape == "container":
        protocol = rng.choice(("iter_def", "iter_gen", "getitem_only"))
        ln = _bind(rng, "Bag", "__len__", "self", "len(self.items)")
        bl = _bind(rng, "Bag", "__bool__", "self", "bool(self.items)",
                   ("def", "lambda", "helper", "after")) if rng.random() < 0.6 else ("", "", "")
        ct = (_bind(rng, "Bag", "__contains__", "self, x", "x in self.items")
              if rng.random() < 0.5 else ("", "", ""))
        members = ["def __init__(self):\n    self.items = []", ln[1], bl[1], ct[1],
                   "def __getitem__(self, j):\n    return self.items[j]",
                   {"iter_def": "def __iter__(self):\n    return iter(self.items)",
                    "iter_gen": "def __iter__(self):\n    yield from self.items",
                    "getitem_only": ""}[protocol],
                   "def add(self, x):\n    self.items.append(x)",
                   "def take(self):\n    return self.items.pop()"]
        cls = _cls("Bag", "class Bag:", members, [ln[2], bl[2], ct[2]], [ln[0], bl[0], ct[0]])
        guard = rng.choice(("if BAG:", "if len(BAG):", "if bool(BAG):", "if not not BAG:",
                            "if BAG and BAG[-1] in BAG:", "if any(True for _ in BAG):"))
        count = rng.choice(("len(list(BAG))", "len([*BAG])", "sum(1 for _ in BAG)",
                            "len(sorted(BAG))", "len(tuple(BAG))", "sum(x in BAG for x in list(BAG))"))
        state = cls + "CAP = 3\nBAG = Bag()\nSTATS = {'in': 0, 'out': 0}"
        ops = [_def("op_put", "if len(BAG) < CAP:\n" + _block(
                    "n = STATS['in']", "_spin(SPIN)", "BAG.add(i)", "STATS['in'] = n + 1")),
               _def("op_take", guard + "\n" + _block(
                    "n = STATS['out']", "_spin(SPIN)", "x = BAG.take()", "STATS['out'] = n + 1",
                    "if x in BAG:\n    _torn('%r taken and still in the bag' % (x,))")),
               _def("op_peek", "n = len(BAG)", f"c = {count}",
                    "if n > CAP:\n    _torn('bag holds %d > CAP' % n)",
                    "if c != n:\n    _torn('iterating the bag gave %d items, len %d' % (c, n))",
                    "if STATS['in'] - STATS['out'] != n:\n"
                    "    _torn('in %r - out %r != len %r' % (STATS['in'], STATS['out'], n))")]
        check = _check("if len(BAG.items) > CAP or STATS['in'] - STATS['out'] != len(BAG.items):\n"
                       "    problems.append('final bag %r, STATS %r' % (BAG.items, STATS))",
                       "if STATS['in'] > calls.get('op_put', 0) or STATS['out'] > calls.get('op_take', 0):\n"
                       "    problems.append('more items moved than calls: %r %r' % (STATS, calls))")
        schedule = ["op_put", "op_take", "op_put", "op_take", "op_peek"]
        variant = (f"shape=container protocol={protocol} len={ln[1] or 'after'!r} "
                   f"bool={bl[1] or bl[2] or 'none'!r} contains={ct[1] or ct[2] or 'none'!r} "
                   f"guard={guard!r} count={count!r}")
    elif shape == "context":
        style = rng.choice(("def", "lambda", "helper", "after", "contextmanager", "suppress"))
        enter_body = "self.depth += 1\nself.entered += 1\nreturn self"
        if style == "contextmanager":
            cls = ("import contextlib\n\n\nclass Guard:\n    def __init__(self):\n"
                   "        self.depth = 0\n        self.entered = 0\n\n\n"
                   "@contextlib.contextmanager\ndef guarded():\n    GUARD.depth += 1\n"
                   "    GUARD.entered += 1\n    try:\n        yield GUARD\n    finally:\n"
                   "        GUARD.depth -= 1\n\n\n")
            with_ = "with guarded() as g:"
        else:
            helpers = ("def _enter(self):\n" + _block(enter_body) + "\n\n\n"
                       "def _exit(self, kind, value, tb):\n    self.depth -= 1\n"
                       "    return kind is Planned\n\n\n")
            if style in ("def", "suppress"):
                methods = ["def __enter__(self):\n" + _block(enter_body),
                           "def __exit__(self, kind, value, tb):\n    self.depth -= 1\n"
                           "    return kind is Planned"]
                after = ""
            elif style == "lambda":
                methods = ["def _in(self):\n" + _block(enter_body), "__enter__ = lambda self: self._in()",
                           "def _out(self):\n    self.depth -= 1",
                           "__exit__ = lambda self, kind, value, tb: self._out() or kind is Planned"]
                after = ""
            elif style == "helper":
                methods = ["__enter__ = _enter", "__exit__ = _exit"]
                after = ""
            else:
                methods = ["__enter__ = _enter"]
                after = "Guard.__exit__ = _exit\n"
            cls = (helpers + "class Guard:\n" + _block(
                "def __init__(self):\n    self.depth = 0\n    self.entered = 0", *methods)
                + "\n\n\n" + after)
            with_ = "with GUARD as g:"
        raising = style == "suppress" or (style != "contextmanager" and rng.random() < 0.3)
        state = cls + "\nGUARD = Guard()\nN = 4\nTOTAL = 400\nACC = [100] * N\nLEDGER = {'done': 0}"
        body = ["if g.depth != 1:\n    _torn('inside with: depth %r' % (g.depth,))",
                "a, b = i % N, (i + 1) % N", "amt = 1 + i % 5", "x = ACC[a]", "_spin(SPIN)",
                "ACC[a] = x - amt", "ACC[b] += amt"]
        if raising:
            body.append("if i % 3 == 0:\n    raise Planned(i)  # swallowed by __exit__")
        ops = [_def("op_work", with_ + "\n" + _block(*body), "LEDGER['done'] += 1",
                    "if GUARD.depth != 0:\n    _torn('after with: depth %r' % (GUARD.depth,))"),
               _def("op_read", "d = GUARD.depth", "total = sum(ACC)",
                    "if d != 0:\n    _torn('another section is inside with: depth %r' % (d,))",
                    "if total != TOTAL:\n    _torn('sum(ACC) = %r' % (total,))",
                    "if GUARD.entered != LEDGER['done']:\n"
                    "    _torn('entered %r, done %r' % (GUARD.entered, LEDGER['done']))")]
        check = _check("if sum(ACC) != TOTAL or GUARD.depth != 0:\n"
                       "    problems.append('final ACC %r depth %r' % (ACC, GUARD.depth))",
                       "if GUARD.entered != calls.get('op_work', 0) or LEDGER['done'] != GUARD.entered:\n"
                       "    problems.append('entered %r, done %r, calls %r' % (GUARD.entered, "
                       "LEDGER['done'], calls.get('op_work', 0)))")
        schedule = ["op_work", "op_work", "op_read"]
        variant = f"shape=context style={style} raising={raising}"
    elif shape == "proxy":
        slots = rng.random() < 0.5
        getter = rng.choice(("getattr", "getattribute"))
        if getter == "getattr":
            get = ("def __getattr__(self, name):\n    try:\n        return self._d[name]\n"
                   "    except KeyError:\n        raise AttributeError(name) from None")
        else:
            get = ("def __getattribute__(self, name):\n    d = object.__getattribute__(self, '_d')\n"
                   "    if name in d:\n        return d[name]\n"
                   "    return object.__getattribute__(self, name)")
        members = [("__slots__ = ('_d',)" if slots else ""),
                   "def __init__(self, d):\n    object.__setattr__(self, '_d', d)", get,
                   "def __setattr__(self, name, value):\n    self._d[name] = value"]
        cls = _cls("Proxy", "class Proxy:", members, [], [])
        move = rng.choice(("x = P.a\n_spin(SPIN)\nP.a = x - d\nP.b = P.b + d",
                           "x = getattr(P, 'a')\n_spin(SPIN)\nsetattr(P, 'a', x - d)\nP.b += d",
                           "x, y = operator.attrgetter('a', 'b')(P)\n_spin(SPIN)\nP.a = x - d\nP.b = y + d",
                           "x = P.a\n_spin(SPIN)\nvars_ = {'a': x - d, 'b': P.b + d}\n"
                           "for k, v in vars_.items():\n    setattr(P, k, v)"))
        read = rng.choice(("a, b = P.a, P.b", "a, b = operator.attrgetter('a', 'b')(P)",
                           "a, b = map(P.__getattr__, 'ab')" if getter == "getattr" else
                           "a, b = map(functools.partial(getattr, P), 'ab')",
                           "a, b = (getattr(P, k) for k in 'ab')", "a, b = DATA['a'], DATA['b']"))
        state = cls + "TOTAL = 200\nDATA = {'a': 100, 'b': 100}\nP = Proxy(DATA)\nMOVED = [0]"
        ops = [_def("op_move", "d = 1 + i % 5", move, "m = MOVED[0]", "MOVED[0] = m + d",
                    "if P.a + P.b != TOTAL:\n    _torn('own move: %r' % ((P.a, P.b),))"),
               _def("op_view", read, "if a + b != TOTAL:\n    _torn('proxy halves sum to %r' % (a + b,))")]
        check = _check("if (DATA['a'], DATA['b']) != (100 - MOVED[0], 100 + MOVED[0]):\n"
                       "    problems.append('final %r, moved %r' % (DATA, MOVED[0]))")
        schedule = ["op_move", "op_view"]
        variant = f"shape=proxy slots={slots} getter={getter} move={move.splitlines()[0]!r} read={read!r}"
    else:  # hashkey
        eq = _bind(rng, "Key", "__eq__", "self, other",
                   "isinstance(other, Key) and self.name == other.name")
        hs = _bind(rng, "Key", "__hash__", "self", "hash(self.name)", ("def", "lambda", "helper"))
        members = ["def __init__(self, name):\n    self.name = name", eq[1], hs[1],
                   "def __repr__(self):\n    return 'Key(%r)' % (self.name,)"]
        cls = _cls("Key", "class Key:", members, [eq[2], hs[2]], [eq[0], hs[0]])
        lookup = rng.choice(("fresh", "stored"))
        key_a = "Key('k%d' % (i % N))" if lookup == "fresh" else "KEYS[i % N]"
        key_b = "Key('k%d' % ((i + 1) % N))" if lookup == "fresh" else "KEYS[(i + 1) % N]"
        move = rng.choice(("x = BAL[a]\n_spin(SPIN)\nBAL[a] = x - amt\nBAL[b] += amt",
                           "x = BAL.get(a)\n_spin(SPIN)\nBAL.update({a: x - amt})\nBAL[b] = BAL[b] + amt",
                           "x = BAL.pop(a)\n_spin(SPIN)\nBAL[a] = x - amt\nBAL[b] += amt",
                           "x = BAL.setdefault(a, 0)\n_spin(SPIN)\nBAL[a] = x - amt\n"
                           "BAL[b] = operator.getitem(BAL, b) + amt"))
        audit = rng.choice(("total = sum(BAL[Key(k.name)] for k in KEYS)", "total = sum(BAL.values())",
                            "total = sum(BAL.get(Key('k%d' % j), 0) for j in range(N))",
                            "total = sum(v for k, v in BAL.items() if k in SEEN)",
                            "total = sum(map(BAL.__getitem__, [Key(k.name) for k in KEYS]))"))
        state = (cls + "N = 4\nTOTAL = 400\nKEYS = [Key('k%d' % j) for j in range(N)]\n"
                 "BAL = {k: 100 for k in KEYS}\nSEEN = set(KEYS)\nMOVES = [0]")
        ops = [_def("op_move", f"a = {key_a}", f"b = {key_b}", "amt = 1 + i % 5", move,
                    "n = MOVES[0]", "MOVES[0] = n + 1",
                    "if len(BAL) != N or Key('k0') not in BAL:\n    _torn('keys of BAL: %r' % (list(BAL),))"),
               _def("op_audit", audit, "if total != TOTAL:\n    _torn('audit saw %r' % (total,))",
                    "if len({Key(k.name) for k in BAL} | SEEN) != N:\n    _torn('Key set of %r' % (list(BAL),))")]
        check = _check("if sum(BAL.values()) != TOTAL or len(BAL) != N:\n"
                       "    problems.append('final BAL %r' % (BAL,))")
        schedule = ["op_move", "op_move", "op_audit"]
        variant = (f"shape=hashkey eq={eq[1] or 'after'!r} hash={hs[1]!r} lookup={lookup} "
                   f"move={move.splitlines()[0]!r} audit={audit!r}")
    body = head + state + "\n\n\n" + "\n\n".join(ops) + "\n\n" + check
    return variant + f" spin={spin}", body, schedule, False, True


#: Generators that read the shared list ``L`` (``N`` items summing to ``TOTAL``),
#: and how a section sums what they give into ``total``.
_GEN_READERS = {
    "for_yield": ("def each():\n    for j in range(N):\n        yield L[j]\n        _spin(SPIN // 3)",
                  "total = sum(each())"),
    "yield_from": ("def each():\n    yield from L", "total = sum(each())"),
    "yield_from_genexp": ("def each():\n    yield from (L[j] for j in range(N))",
                          "total = sum(each())"),
    "halves": ("def each():\n    yield from L[:2]\n    _spin(SPIN // 3)\n    yield from L[2:]",
               "total = sum(x for x in each())"),
    "tee": ("def each():\n    for x in L:\n        yield x",
            "a, b = itertools.tee(each())\ntotal = sum(a)\nif sum(b) != total:\n"
            "    _torn('tee: the two copies differ')"),
    "send": ("def each():\n    t = 0\n    while True:\n        x = yield t\n        if x is None:\n"
             "            return t\n        t += x",
             "g = each()\nnext(g)\nfor x in L:\n    g.send(x)\ntry:\n    g.send(None)\n"
             "except StopIteration as stop:\n    total = stop.value"),
    "return_value": ("def summer():\n    t = 0\n    for x in L:\n        t += x\n        yield x\n"
                     "    return t\n\n\ndef each(box):\n    box.append((yield from summer()))",
                     "box = []\nseen = sum(each(box))\ntotal = box[0]\nif seen != total:\n"
                     "    _torn('yielded %r, returned %r' % (seen, total))"),
    "closing": ("def each():\n    META['open'] += 1\n    try:\n        yield from L\n    finally:\n"
                "        META['open'] -= 1",
                "it = each()\nfirst = next(it)\nif META['open'] < 1:\n    _torn('generator entered, open %r' "
                "% (META['open'],))\nrest = list(itertools.islice(it, N - 1))\nit.close()\n"
                "total = first + sum(rest)"),
    "genexp_filter": ("def each():\n    return (x for x in L if x is not None)",
                      "total = sum(each())"),
    "nested_genexp": ("def each():\n    return (y for x in ([v] for v in L) for y in x)",
                      "total = sum(each())"),
    "enumerate_gen": ("def each():\n    for j, x in enumerate(L):\n        yield j, x",
                      "total = sum(x for _, x in each())"),
    "map_gen": ("def each():\n    yield from map(operator.pos, L)",
                "total = functools.reduce(operator.add, each())"),
}

#: Generators that make the transfer (``amt`` from ``L[a]`` to ``L[b]``) as they
#: are consumed, and how a section consumes them.
_GEN_WRITERS = {
    "steps": "def steps(a, b, amt):\n    x = L[a]\n    yield 1\n    _spin(SPIN)\n    L[a] = x - amt\n    yield 2\n"
             "    L[b] += amt",
    "sub": "def half(j, delta):\n    x = L[j]\n    yield j\n    _spin(SPIN)\n    L[j] = x + delta\n\n\n"
           "def steps(a, b, amt):\n    yield from half(a, -amt)\n    yield from half(b, amt)",
    "genexp": "def steps(a, b, amt):\n    delta = [0] * N\n    delta[a] -= amt\n    delta[b] += amt\n"
              "    return (L.__setitem__(j, L[j] + delta[j] + 0 * _spin(SPIN)) for j in range(N))",
    "write_after": "def steps(a, b, amt):\n    for j, d in ((a, -amt), (b, amt)):\n        x = L[j]\n"
                   "        yield x\n        _spin(SPIN)\n        L[j] = x + d",
    "sentinel": "def steps(a, b, amt):\n    x = L[a]\n    yield x\n    _spin(SPIN)\n    L[a] = x - amt\n    y = L[b]\n"
                "    yield y\n    L[b] = y + amt\n    yield None",
}

_GEN_CONSUMERS = (
    "for _ in steps(a, b, amt):\n    _spin(SPIN)",
    "list(steps(a, b, amt))",
    "collections.deque(steps(a, b, amt), maxlen=0)",
    "for _ in itertools.chain(steps(a, b, amt), ()):\n    _spin(SPIN)",
    "sum(1 for _ in steps(a, b, amt))",
    "it = steps(a, b, amt)\nwhile True:\n    try:\n        next(it)\n    except StopIteration:\n"
    "        break\n    _spin(SPIN)",
    "all(v is not False for v in steps(a, b, amt))",
    "tuple(itertools.islice(steps(a, b, amt), None))",
)


def generators(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    """Generator functions and expressions over shared state, made and consumed in
    one section: ``yield from``, ``send``, ``tee``, ``close``, and generators that
    write shared state as they are resumed."""
    spin = rng.choice(SPINS)
    reader = rng.choice(sorted(_GEN_READERS))
    writer = rng.choice(sorted(_GEN_WRITERS))
    consume = rng.choice(_GEN_CONSUMERS)
    own = rng.random() < 0.4
    define, read = _GEN_READERS[reader]
    state = (f"import collections\nimport functools\nimport itertools\nimport operator\n\n"
             f"SPIN = {spin}\nN = 5\nTOTAL = 500\nL = [100] * N\nMETA = {{'moves': 0, 'open': 0}}\n\n\n"
             + define + "\n\n\n" + _GEN_WRITERS[writer])
    own_lines = ([read, "if total != TOTAL:\n    _torn('own move, then the generator summed %r' % (total,))"]
                 if own else [])
    ops = [_def("op_move", "a = i % N", "b = (a + 1 + i % 3) % N", "amt = 1 + i % 7", consume,
                "m = META['moves']", "META['moves'] = m + 1", *own_lines),
           _def("op_audit", read, "if total != TOTAL:\n    _torn('generator summed %r' % (total,))",
                "if META['open'] != 0:\n    _torn('a generator of another section is open')")]
    check = _check("if sum(L) != TOTAL:\n    problems.append('final sum %r' % (sum(L),))",
                   "if META['moves'] != calls.get('op_move', 0) or META['open'] != 0:\n"
                   "    problems.append('META %r, moves %r' % (META, calls.get('op_move', 0)))")
    body = state + "\n\n\n" + "\n\n".join(ops) + "\n\n" + check
    variant = f"reader={reader} writer={writer} consume={consume.splitlines()[0]!r} own={own} spin={spin}"
    return variant, body, ["op_move", "op_move", "op_audit"], False, True


#: Per shape of ``classes``: the shared state, how a section moves ``d`` from
#: the first half to the second (reading, spinning, writing), the forms that
#: read both halves into ``a`` and ``b``, and the final halves.
#: (A fifth item, when there is one, adds lines to ``check``.)
_CLASS_SHAPES: dict[str, tuple] = {
    "descriptor": (
        "class Field:\n    def __set_name__(self, owner, name):\n        self.key = '_' + name\n\n"
        "    def __get__(self, obj, objtype=None):\n        if obj is None:\n            return self\n"
        "        return getattr(obj, self.key)\n\n"
        "    def __set__(self, obj, value):\n        setattr(obj, self.key, value)\n\n\n"
        "class Acct:\n    a = Field()\n    b = Field()\n\n    def __init__(self):\n"
        "        self.a = 100\n        self.b = 100\n\n\nH = Acct()",
        ("x = H.a\n_spin(SPIN)\nH.a = x - d\nH.b += d",
         "x = getattr(H, 'a')\n_spin(SPIN)\nsetattr(H, 'a', x - d)\nH.b = H.b + d",
         "x = Acct.a.__get__(H)\n_spin(SPIN)\nAcct.a.__set__(H, x - d)\nAcct.b.__set__(H, H.b + d)"),
        ("a, b = H.a, H.b", "a, b = operator.attrgetter('a', 'b')(H)", "a, b = H._a, H._b",
         "a, b = (Acct.__dict__[k].__get__(H, Acct) for k in 'ab')"),
        ("H.a", "H.b")),
    "descriptor_table": (
        "class Field:\n    def __init__(self):\n        self.values = {}\n\n"
        "    def __get__(self, obj, objtype=None):\n        if obj is None:\n            return self\n"
        "        return self.values[id(obj)]\n\n"
        "    def __set__(self, obj, value):\n        self.values[id(obj)] = value\n\n\n"
        "class Acct:\n    a = Field()\n    b = Field()\n\n    def __init__(self):\n"
        "        self.a = 100\n        self.b = 100\n\n\nH = Acct()",
        ("x = H.a\n_spin(SPIN)\nH.a = x - d\nH.b += d",
         "x = getattr(H, 'a')\n_spin(SPIN)\nsetattr(H, 'a', x - d)\nH.b = H.b + d"),
        ("a, b = H.a, H.b", "a, b = operator.attrgetter('a', 'b')(H)",
         "a, b = Acct.a.values[id(H)], Acct.b.values[id(H)]"),
        ("H.a", "H.b")),
    "slots_inherit": (
        "class Base:\n    __slots__ = ('a',)\n\n\nclass Mid(Base):\n    __slots__ = ('b',)\n\n\n"
        "class Leaf(Mid):\n    __slots__ = ('n',)\n\n    def __init__(self):\n"
        "        self.a = 100\n        self.b = 100\n        self.n = 0\n\n\nH = Leaf()",
        ("x = H.a\n_spin(SPIN)\nH.a = x - d\nH.b += d",
         "x = Base.a.__get__(H)\n_spin(SPIN)\nBase.a.__set__(H, x - d)\nMid.b.__set__(H, H.b + d)",
         "x, y = H.a, H.b\n_spin(SPIN)\nH.a, H.b = x - d, y + d"),
        ("a, b = H.a, H.b", "a, b = operator.attrgetter('a', 'b')(H)",
         "a, b = (getattr(H, k) for k in ('a', 'b'))", "a = Base.a.__get__(H, Leaf)\nb = H.b"),
        ("H.a", "H.b")),
    "slots_dict_mix": (
        "class Base:\n    __slots__ = ('a',)\n\n\nclass Mid(Base):\n    pass\n\n\n"
        "class Leaf(Mid):\n    __slots__ = ('b',)\n\n    def __init__(self):\n"
        "        self.a = 100\n        self.b = 100\n        self.extra = 0\n\n\nH = Leaf()",
        ("x = H.a\n_spin(SPIN)\nH.a = x - d\nH.b += d\nH.extra += d",
         "x, y = H.a, H.b\n_spin(SPIN)\nH.a, H.b = x - d, y + d\nH.extra = H.extra + d"),
        ("a, b = H.a, H.b", "a, b = operator.attrgetter('a', 'b')(H)",
         "a, b = H.a, H.b\nif H.extra != 100 - a:\n    _torn('extra %r, a %r' % (H.extra, a))"),
        ("H.a", "H.b")),
    "super_chain": (
        "class Base:\n    def __init__(self):\n        self.a = 100\n        self.b = 100\n\n"
        "    def move(self, d):\n        x = self.a\n        _spin(SPIN)\n        self.a = x - d\n\n\n"
        "class Mid(Base):\n    def move(self, d):\n        SUPER_MID\n        self.b += d\n\n\n"
        "class Leaf(Mid):\n    def move(self, d):\n        SUPER_LEAF\n\n"
        "    @property\n    def halves(self):\n        return self.a, self.b\n\n\nH = Leaf()",
        ("H.move(d)", "Leaf.move(H, d)", "type(H).move(H, d)"),
        ("a, b = H.halves", "a, b = H.a, H.b", "a, b = Leaf.halves.fget(H)"),
        ("H.a", "H.b")),
    "metaclass": (
        "class Meta(type):\n    moved = 0\n\n    @property\n    def halves(cls):\n"
        "        return cls.a, cls.b\n\n\nclass Pool(metaclass=Meta):\n    a = 100\n    b = 100\n\n\n"
        "class SubPool(Pool):\n    pass",
        ("x = Pool.a\n_spin(SPIN)\nPool.a = x - d\nPool.b += d\nMeta.moved = Pool.moved + d",
         "x = SubPool.a\n_spin(SPIN)\nPool.a = x - d\nPool.b = SubPool.b + d\ntype(Pool).moved += d",
         "x = type.__getattribute__(Pool, 'a')\n_spin(SPIN)\nsetattr(Pool, 'a', x - d)\n"
         "Pool.b += d\nMeta.moved += d"),
        ("a, b = Pool.halves", "a, b = SubPool.halves", "a, b = Pool.a, SubPool.b",
         "a, b = type(Pool).halves.fget(Pool)\nif Pool.moved != 100 - a:\n    _torn('moved %r, a %r' % (Pool.moved, a))"),
        ("Pool.a", "Pool.b")),
    "metaclass_setattr": (
        "class Meta(type):\n    def __setattr__(cls, name, value):\n"
        "        type.__setattr__(cls, name, value)\n        if name != 'writes':\n"
        "            type.__setattr__(cls, 'writes', cls.writes + 1)\n\n\n"
        "class Pool(metaclass=Meta):\n    a = 100\n    b = 100\n    writes = 0",
        ("x = Pool.a\n_spin(SPIN)\nPool.a = x - d\nPool.b += d",
         "x = Pool.a\n_spin(SPIN)\nsetattr(Pool, 'a', x - d)\nPool.b = Pool.b + d"),
        ("a, b = Pool.a, Pool.b\nif Pool.writes % 2:\n"
         "    _torn('the metaclass counted %r writes: odd' % (Pool.writes,))",
         "a, b, w = Pool.a, Pool.b, Pool.writes\nif w % 2:\n    _torn('odd writes %r' % (w,))"),
        ("Pool.a", "Pool.b"),
        "if Pool.writes != 2 * calls.get('op_move', 0):\n"
        "    problems.append('the metaclass counted %r writes for %r moves' % "
        "(Pool.writes, calls.get('op_move', 0)))"),
    "function_attrs": (
        "import functools\n\n\ndef ledger():\n    return ledger.a + ledger.b\n\n\n"
        "ledger.a = 100\nledger.b = 100\nPART = functools.partial(ledger)\nPART.a = 0",
        ("x = ledger.a\n_spin(SPIN)\nledger.a = x - d\nledger.b += d\nPART.a -= d",
         "x = getattr(ledger, 'a')\n_spin(SPIN)\nsetattr(ledger, 'a', x - d)\n"
         "ledger.b = ledger.b + d\nPART.a = PART.a - d"),
        ("a, b = ledger.a, ledger.b", "a, b = operator.attrgetter('a', 'b')(ledger)",
         "a, b = ledger.a, ledger() - ledger.a",
         "a, b = ledger.a, ledger.b\nif PART.a != a - 100:\n    _torn('partial %r, a %r' % (PART.a, a))"),
        ("ledger.a", "ledger.b")),
    "exception_attrs": (
        "class Failure(Exception):\n    pass\n\n\nH = Failure('ledger')\nH.a = 100\nH.b = 100",
        ("x = H.a\n_spin(SPIN)\nH.a = x - d\nH.b += d",
         "x = getattr(H, 'a')\n_spin(SPIN)\nsetattr(H, 'a', x - d)\nH.b = H.b + d"),
        ("a, b = H.a, H.b", "a, b = operator.attrgetter('a', 'b')(H)"),
        ("H.a", "H.b")),
    "module_object": (
        "import types\n\nNS = types.ModuleType('ledger')\nNS.a = 100\nNS.b = 100",
        ("x = NS.a\n_spin(SPIN)\nNS.a = x - d\nNS.b += d",
         "x = getattr(NS, 'a')\n_spin(SPIN)\nsetattr(NS, 'a', x - d)\nNS.b = NS.b + d"),
        ("a, b = NS.a, NS.b", "a, b = operator.attrgetter('a', 'b')(NS)"),
        ("NS.a", "NS.b")),
    "namespace": (
        "import types\n\nNS = types.SimpleNamespace(a=100, b=100)",
        ("x = NS.a\n_spin(SPIN)\nNS.a = x - d\nNS.b += d",
         "x = getattr(NS, 'a')\n_spin(SPIN)\nsetattr(NS, 'a', x - d)\nNS.b = NS.b + d"),
        ("a, b = NS.a, NS.b", "a, b = operator.attrgetter('a', 'b')(NS)",
         "a, b = map(int, re.findall(r'-?\\d+', repr(NS)))",
         "if NS != types.SimpleNamespace(a=NS.a, b=NS.b):\n    _torn('namespace ==')\na, b = NS.a, NS.b"),
        ("NS.a", "NS.b")),
    "nonlocal_nested": (
        "def _make():\n    a, b = 100, 100\n\n    def move(d):\n        def take():\n"
        "            nonlocal a\n            x = a\n            _spin(SPIN)\n            a = x - d\n\n"
        "        def give():\n            nonlocal b\n            b += d\n\n        take()\n"
        "        give()\n\n    def peek():\n        return a, b\n\n    return move, peek\n\n\n"
        "MOVE, PEEK = _make()",
        ("MOVE(d)",),
        ("a, b = PEEK()", "a, b = PEEK()\n_spin(SPIN // 3)\nif (a, b) != PEEK():\n    _torn('PEEK changed')"),
        ("PEEK()[0]", "PEEK()[1]")),
    "classcounter": (
        "class Acct:\n    a = 100\n    b = 100\n\n    def move(self, d):\n        x = type(self).a\n"
        "        _spin(SPIN)\n        type(self).a = x - d\n        self.__class__.b += d\n\n"
        "    @classmethod\n    def halves(cls):\n        return cls.a, cls.b\n\n\n"
        "class Sub(Acct):\n    pass\n\n\nH = Acct()\nS = Sub()",
        ("H.move(d)", "Acct.move(H, d)"),
        ("a, b = Acct.halves()", "a, b = Sub.halves()", "a, b = S.a, S.b", "a, b = H.halves()"),
        ("Acct.a", "Acct.b")),
    "dataclass": (
        "import dataclasses\n\n\n@dataclasses.dataclass\nclass Ledger:\n"
        "    entries: list = dataclasses.field(default_factory=list)\n    a: int = 100\n    b: int = 100\n\n\n"
        "H = Ledger()",
        ("x = H.a\n_spin(SPIN)\nH.a = x - d\nH.b += d\nH.entries.append(d)",
         "x = H.a\nH.entries.append(d)\n_spin(SPIN)\nH.a, H.b = x - d, H.b + d",
         "y = dataclasses.replace(H, a=H.a - d, b=H.b + d)\n_spin(SPIN)\nH.a, H.b = y.a, y.b\n"
         "H.entries += [d]"),
        ("a, b = H.a, H.b\nif sum(H.entries) != 100 - a:\n    _torn('entries %r, a %r' % (H.entries, a))",
         "t = dataclasses.astuple(H)\na, b = t[1], t[2]",
         "d = dataclasses.asdict(H)\na, b = d['a'], d['b']",
         "a, b = map(int, re.findall(r'a=(-?\\d+), b=(-?\\d+)', repr(H))[0])"),
        ("H.a", "H.b")),
}


def classes(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    """Class machinery: descriptors, ``__slots__`` along a hierarchy, ``super()``
    chains, metaclass attributes and properties, module and namespace objects,
    ``nonlocal`` cells of nested functions, ``type(self)`` class counters, dataclasses."""
    shape = rng.choice(sorted(_CLASS_SHAPES))
    state, moves, reads, (first, second), *extra = _CLASS_SHAPES[shape]
    spin = rng.choice(SPINS)
    if shape == "super_chain":
        state = state.replace("SUPER_MID", rng.choice(("super().move(d)", "super(Mid, self).move(d)",
                                                        "Base.move(self, d)")))
        state = state.replace("SUPER_LEAF", rng.choice(("super().move(d)", "super(Leaf, self).move(d)",
                                                         "Mid.move(self, d)", "super(Mid, self).move(d)\n"
                                                         "        self.b += d")))
    move = rng.choice(moves)
    read = rng.choice(reads)
    own = rng.random() < 0.4
    lines = ["d = 1 + i % 5", move, "m = MOVED[0]", "MOVED[0] = m + d"]
    if own:
        lines += [read, f"if (a, b) != ({first}, {second}) or a + b != TOTAL:\n"
                        "    _torn('own move missed: read %r' % ((a, b),))"]
    ops = [_def("op_move", *lines),
           _def("op_view", read, "if a + b != TOTAL:\n    _torn('halves sum to %r' % (a + b,))")]
    check = _check(f"if ({first}, {second}) != (100 - MOVED[0], 100 + MOVED[0]):\n"
                   f"    problems.append('final %r, moved %r' % (({first}, {second}), MOVED[0]))",
                   *extra)
    body = (f"import operator\nimport re\n\nSPIN = {spin}\nTOTAL = 200\nMOVED = [0]\n\n\n" + state
            + "\n\n\n" + "\n\n".join(ops) + "\n\n" + check)
    variant = f"shape={shape} move={move.splitlines()[0]!r} read={read.splitlines()[0]!r} own={own} spin={spin}"
    return variant, body, ["op_move", "op_move", "op_view"], False, True


#: Operations on the shared probes ``P`` and ``P2`` (``Probe`` instances whose
#: special methods each count their call in a shared counter), and how many
#: special-method calls CPython makes for each: exactly that many, in a serial
#: run as in any other.
_PROBE_OPS: tuple[tuple[str, int], ...] = (
    ("if P:\n    r = 1", 1),                       # __len__ (no __bool__)
    ("r = bool(P)", 1),
    ("r = not P", 1),
    ("r = P and 1", 1),
    ("r = len(P)", 1),
    ("r = 5 in P", 1),                             # __contains__
    ("r = P == P2", 1),
    ("r = P != P2", 1),                            # __ne__ defined
    ("r = P < P2", 1),
    ("r = P2 > P", 1),                             # reflected __lt__
    ("r = max(P, P2)", 1),
    ("r = sorted([P2, P])", 1),
    ("r = [P] == [P]", 0),                         # identity: no __eq__
    ("r = P in [P]", 0),
    ("r = P in [P2, P]", 1),
    ("r = [P2, P2, P].count(P)", 2),
    ("r = [P2, P].index(P)", 1),
    ("with P:\n    r = 1", 2),                     # __enter__, __exit__
    ("r = f'{P}'", 1),                             # __format__
    ("r = '%s' % (P,)", 1),                        # __str__
    ("r = str(P) + repr(P)", 2),
    ("r = P.missing", 1),                          # __getattr__
    ("r = getattr(P, 'nothing', 0)", 1),
    ("r = hasattr(P, 'absent')", 1),
    ("r = P[3]", 1),                               # __getitem__
    ("P[3] = 4", 1),                               # __setitem__
    ("r = operator.index(P)", 1),
    ("r = P + 1", 1),
    ("r = 1 + P", 1),                              # __radd__
    ("r = -P", 1),
    ("r = abs(P)", 1),
    ("r = P(4)", 1),                               # __call__
    ("for r in P:\n    pass", 1),                  # __iter__ (returns a tuple's iterator)
    ("r = P.prop", 1),                             # property getter
    ("P.prop = 3", 1),                             # property setter
    ("r = [x for x in (P, P2) if x]", 2),
    ("r = sum(1 for x in (P, P2) if len(x))", 2),
    ("r = list(filter(None, [P, P2]))", 2),
    ("r = all([P, P2])", 2),
    ("r = any([P])", 1),
    ("r = P if P else P2", 1),
    ("r = [1, 2][P > P2]", 1),
)

#: Where the probes count their calls, and the lines that bump it.
_PROBE_COUNTERS = {
    "dict": ("COUNT = {'n': 0}", "n = COUNT['n']\n_spin(SPIN)\nCOUNT['n'] = n + 1", "COUNT['n']"),
    "instance": ("", "n = TALLY.n\n_spin(SPIN)\nTALLY.n = n + 1", "TALLY.n"),
    "classattr": ("", "n = Probe.calls\n_spin(SPIN)\nProbe.calls = n + 1", "Probe.calls"),
    "type_self": ("", "n = type(self).calls\n_spin(SPIN)\ntype(self).calls = n + 1", "Probe.calls"),
    "global": ("CALLS = 0", "global CALLS\nn = CALLS\n_spin(SPIN)\nCALLS = n + 1", "CALLS"),
    "list": ("COUNT = [0]", "COUNT[0] = COUNT[0] + 0 * _spin(SPIN) + 1", "COUNT[0]"),
}


def callcounts(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    """Special methods that write shared state (a call counter), called by the
    interpreter and by C code: a serial run calls each exactly as often as
    CPython does, so a section that sees its counter move by any other
    amount saw another section's calls, or the engine calling them again."""
    spin = rng.choice(SPINS)
    counter = rng.choice(sorted(_PROBE_COUNTERS))
    state, bump, read = _PROBE_COUNTERS[counter]
    methods = {
        "__len__": ("self", "2"), "__contains__": ("self, x", "True"),
        "__eq__": ("self, other", "self is other"), "__ne__": ("self, other", "self is not other"),
        "__lt__": ("self, other", "self.k < other.k"), "__enter__": ("self", "self"),
        "__exit__": ("self, *exc", "False"), "__format__": ("self, spec", "'p%d' % self.k"),
        "__str__": ("self", "'s%d' % self.k"), "__repr__": ("self", "'Probe(%d)' % self.k"),
        "__getattr__": ("self, name", None), "__getitem__": ("self, j", "j * 2"),
        "__setitem__": ("self, j, v", "None"), "__index__": ("self", "self.k"),
        "__add__": ("self, other", "self.k + other"), "__radd__": ("self, other", "other + self.k"),
        "__neg__": ("self", "-self.k"), "__abs__": ("self", "self.k"), "__call__": ("self, x", "x + self.k"),
        "__iter__": ("self", "iter((1, 2))"),
    }
    style = rng.choice(("def", "helper", "lambda_via"))
    members = ["__hash__ = object.__hash__", "calls = 0",
               "def __init__(self, k):\n    self.k = k"]
    before = [f"def _bump(self):\n" + _block(bump) + "\n\n\n"]
    for name, (args, result) in methods.items():
        if name == "__getattr__":
            members.append("def __getattr__(self, name):\n    if name.startswith('_'):\n"
                           "        raise AttributeError(name)\n    _bump(self)\n    return 7")
            continue
        if style == "def" or name in ("__exit__",):
            members.append(f"def {name}({args}):\n    _bump(self)\n    return {result}")
        elif style == "helper":
            before.append(f"def _p{name.strip('_')}({args}):\n    _bump(self)\n    return {result}\n\n\n")
            members.append(f"{name} = _p{name.strip('_')}")
        else:
            members.append(f"{name} = lambda {args}: _bump(self) or {result}")
    members.append("@property\ndef prop(self):\n    _bump(self)\n    return self.k")
    members.append("@prop.setter\ndef prop(self, value):\n    _bump(self)")
    cls = _cls("Probe", "class Probe:", members, [], before)
    ops_chosen = rng.sample(range(len(_PROBE_OPS)), 4)
    defs = []
    expected = {}
    for j, index in enumerate(ops_chosen):
        code, k = _PROBE_OPS[index]
        name = f"op_{j}"
        expected[name] = k
        defs.append(_def(name, f"before = {read}", "_spin(SPIN)", code, f"after = {read}",
                         f"if after - before != {k}:\n"
                         f"    _torn('%s: %d special-method calls, not {k}' % "
                         f"({code.splitlines()[0]!r}, after - before))"))
    defs.append(_def("op_read", f"a = {read}", f"_spin(SPIN)", f"b = {read}",
                     "if a != b:\n    _torn('the counter moved during a read-only section')"))
    check = _check(f"expected = sum(calls.get(op, 0) * k for op, k in {expected!r}.items())",
                   f"if {read} != expected:\n"
                   f"    problems.append('%d special-method calls, expected %d' % ({read}, expected))")
    body = ("import operator\n\n" + f"SPIN = {spin}\n{state}\n\n\n" + cls
            + "P = Probe(1)\nP2 = Probe(2)\nTALLY = Probe(0)\nTALLY.n = 0\n\n\n" + "\n\n".join(defs) + "\n\n" + check)
    variant = (f"counter={counter} style={style} ops="
               f"{[_PROBE_OPS[j][0].splitlines()[0] for j in ops_chosen]} spin={spin}")
    return variant, body, [f"op_{j}" for j in range(4)] + ["op_read"], False, True


#: Constructs that would swallow any exception raised in ``BODY`` (none is in a
#: serial run): the engine's own abort must not be lost in them.
_SWALLOWERS = {
    "except_base": "try:\n    BODY\nexcept BaseException:\n    LOST['n'] += 1",
    "bare_except": "try:\n    BODY\nexcept:\n    LOST['n'] += 1",
    "suppress": "with contextlib.suppress(BaseException):\n    BODY",
    "exit_true": "with SWALLOW:\n    BODY",
    "finally_return": "def _inner():\n    try:\n        BODY\n    finally:\n        return 0\n\n\n_inner()",
    "generator_catch": "def _gen():\n    try:\n        BODY\n        yield 1\n    except BaseException:\n"
                       "        LOST['n'] += 1\n        yield 2\n\n\nlist(_gen())",
    "except_star": "try:\n    BODY\nexcept* BaseException:\n    LOST['n'] += 1",
    "hasattr_getattr": "hasattr(HOOK, 'go')",
    "getattr_default": "getattr(HOOK, 'go', None)",
    "loop_continue": "for _ in range(1):\n    try:\n        BODY\n    except BaseException:\n        continue",
}


def swallow(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    """A transfer inside a construct that swallows every exception (bare
    ``except``, ``except BaseException``, ``suppress(BaseException)``, an
    ``__exit__`` returning True, ``return`` in ``finally``...): nothing is
    raised in a serial run, so the handler never runs; under the STM an abort
    raised inside must still end the attempt."""
    spin = rng.choice(SPINS)
    kinds = sorted(_SWALLOWERS)
    import sys
    if sys.version_info < (3, 11):
        kinds.remove("except_star")
    form = rng.choice(kinds)
    after = rng.choice(("", "effects.note(i)", "_spin(SPIN)\ntotal = sum(ACC)\n"
                        "if total != TOTAL:\n    _torn('after the swallowing construct: %r' % (total,))"))
    transfer = ["a, b = i % N, (i + 1) % N", "amt = 1 + i % 5", "x = ACC[a]", "_spin(SPIN)",
                "ACC[a] = x - amt", "y = ACC[b]", "_spin(SPIN // 4)", "ACC[b] = y + amt",
                "MOVES[0] += 1"]
    if form in ("hasattr_getattr", "getattr_default"):
        pre = ("class Hook:\n    def __getattr__(self, name):\n        if name != 'go':\n"
               "            raise AttributeError(name)\n        _transfer(I[0])\n"
               "        raise AttributeError(name)\n\n\nHOOK = Hook()\nI = [0]\n\n\n"
               + _def("_transfer", *transfer) + "\n\n")
        code = "I[0] = i\n" + _SWALLOWERS[form]
    else:
        pre = ""
        code = _SWALLOWERS[form].replace("BODY", "\n".join(transfer).replace(
            "\n", "\n" + " " * _indent_of(_SWALLOWERS[form], "BODY")))
    state = ("import contextlib\n\nSPIN = %d\nN = 4\nTOTAL = 400\nACC = [100] * N\nMOVES = [0]\n"
             "LOST = {'n': 0}\n\n\nclass Swallow:\n    def __enter__(self):\n        return self\n\n"
             "    def __exit__(self, *exc):\n        if exc[0] is not None:\n"
             "            LOST['n'] += 1\n        return True\n\n\nSWALLOW = Swallow()\n\n\n" % spin) + pre
    ops = [_def("op_move", code, *([after] if after else [])),
           _def("op_audit", "total = sum(ACC)", "if total != TOTAL:\n    _torn('sum(ACC) = %r' % (total,))",
                "if LOST['n']:\n    _torn('a swallowing handler ran %d times' % LOST['n'])")]
    check = _check("if sum(ACC) != TOTAL:\n    problems.append('final sum %r' % (sum(ACC),))",
                   "if MOVES[0] != calls.get('op_move', 0):\n"
                   "    problems.append('MOVES %r != calls %r' % (MOVES[0], calls.get('op_move', 0)))",
                   "if LOST['n']:\n    problems.append('a swallowing handler ran %d times' % LOST['n'])")
    body = state + "\n\n" + "\n\n".join(ops) + "\n\n" + check
    return f"form={form} after={after.splitlines()[0] if after else ''!r} spin={spin}", body, \
        ["op_move", "op_move", "op_audit"], False, True


def _indent_of(text: str, word: str) -> int:
    line = next(line for line in text.splitlines() if word in line)
    return len(line) - len(line.lstrip())


#: How ``records`` sections replace ``old`` by ``new`` (equal to it, not the
#: same object) in the shared set ``S`` (or the keys of ``D``).
_RECORD_REPLACES = {
    "set": ("S.discard(old)\n_spin(SPIN)\nS.add(new)",
            "S.remove(old)\n_spin(SPIN)\nS.add(new)",
            "S.difference_update([old])\n_spin(SPIN)\nS.update([new])",
            "global S\nS -= {old}\n_spin(SPIN)\nS |= {new}",
            "S.symmetric_difference_update({old})\n_spin(SPIN)\nS.add(new)",
            "global S\nS ^= {old}\n_spin(SPIN)\nS ^= {new}",
            "keep = {r for r in S if r != old}\n_spin(SPIN)\nS.clear()\nS.update(keep)\nS.add(new)",
            "global S\nrest = S - {old}\n_spin(SPIN)\nS = rest | {new}"),
    "dict": ("del D[old]\n_spin(SPIN)\nD[new] = True",
             "D.pop(old)\n_spin(SPIN)\nD[new] = True",
             "D.pop(old)\n_spin(SPIN)\nD.update({new: True})",
             "D.pop(old)\n_spin(SPIN)\nD.setdefault(new, True)"),
    "frozenset": ("global S\nrest = S - {old}\n_spin(SPIN)\nS = rest | frozenset([new])",
                  "global S\nrest = frozenset(r for r in S if r != old)\n_spin(SPIN)\nS = rest.union([new])"),
}


def records(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    """Records kept in a shared set (or as dict keys), equal by their id and
    replaced by a new equal record with another payload (``S.discard(old);
    S.add(new)``), or numbers replaced by an equal number of another type
    (``1`` by ``1.0``): a serial run keeps the new object."""
    kind = rng.choice(("set", "set", "dict", "frozenset"))
    payload = rng.choice(("balance", "number"))
    spin = rng.choice(SPINS)
    replace = rng.choice(_RECORD_REPLACES[kind])
    holder = "D" if kind == "dict" else "S"
    declare = ["global S"] if replace.startswith("global S\n") else []
    replace = replace.removeprefix("global S\n")
    ctor = {"set": "set", "dict": "dict.fromkeys", "frozenset": "frozenset"}[kind]
    if payload == "balance":
        state = ("class Rec:\n    def __init__(self, ident, bal):\n        self.ident = ident\n"
                 "        self.bal = bal\n\n    def __eq__(self, other):\n"
                 "        return isinstance(other, Rec) and self.ident == other.ident\n\n"
                 "    def __hash__(self):\n        return hash(self.ident)\n\n"
                 "    def __repr__(self):\n        return 'Rec(%r, %r)' % (self.ident, self.bal)\n\n\n"
                 f"N = 4\nTOTAL = 400\n{holder} = {ctor}(Rec(j, 100) for j in range(N))\n"
                 "MOVES = [0]\nLEDGER = dict.fromkeys(range(N), 100)")
        find = f"next(r for r in {holder} if r.ident == {{}})"
        ops = [_def("op_move", *declare, "a, b = i % N, (i + 1) % N", "amt = 1 + i % 5",
                    f"old = {find.format('a')}", "new = Rec(a, old.bal - amt)", replace,
                    f"old = {find.format('b')}", "new = Rec(b, old.bal + amt)", replace,
                    "MOVES[0] += 1", "LEDGER[a] -= amt", "LEDGER[b] += amt",
                    f"if {{r.ident: r.bal for r in {holder}}} != LEDGER:\n"
                    f"    _torn('own replacements: records %r, ledger %r' % (sorted({holder}, "
                    "key=lambda r: r.ident), LEDGER))",
                    f"if sum(r.bal for r in {holder}) != TOTAL:\n"
                    "    _torn('own replacements: the records sum to %r' % "
                    f"(sum(r.bal for r in {holder}),))"),
               _def("op_audit", f"total = sum(r.bal for r in {holder})", f"n = len({holder})",
                    "if total != TOTAL or n != N:\n    _torn('%d records sum to %r' % (n, total))",
                    f"if {{r.ident: r.bal for r in {holder}}} != LEDGER:\n"
                    "    _torn('records and ledger differ')")]
        check = _check(f"total = sum(r.bal for r in {holder})",
                       f"if total != TOTAL or len({holder}) != N:\n"
                       f"    problems.append('final records %r' % (sorted({holder}, key=lambda r: r.ident),))",
                       f"if {{r.ident: r.bal for r in {holder}}} != LEDGER:\n"
                       f"    problems.append('final records %r, ledger %r' % (sorted({holder}, "
                       "key=lambda r: r.ident), LEDGER))")
        schedule = ["op_move", "op_move", "op_audit"]
    else:
        # 1 <-> 1.0 <-> True... : KIND says which type the element has now
        state = (f"{holder} = {ctor}([1, 2])\nKIND = {{'t': 'int'}}\nNEXT = {{'int': 1.0, 'float': True, "
                 "'bool': 1}\n"
                 "NAMES = {int: 'int', float: 'float', bool: 'bool'}")
        ops = [_def("op_retype", *declare, "old = next(x for x in " + holder + " if x == 1)",
                    "if NAMES[type(old)] != KIND['t']:\n"
                    "    _torn('element %r, KIND %r' % (old, KIND['t']))",
                    "new = NEXT[NAMES[type(old)]]", replace,
                    "KIND['t'] = NAMES[type(new)]",
                    f"now = next(x for x in {holder} if x == 1)",
                    "if type(now) is not type(new):\n"
                    "    _torn('own replacement of %r by %r left %r' % (old, new, now))"),
               _def("op_audit", f"now = next(x for x in {holder} if x == 1)",
                    "if NAMES[type(now)] != KIND['t']:\n"
                    "    _torn('element %r, KIND %r' % (now, KIND['t']))")]
        check = _check(f"now = [x for x in {holder} if x == 1]",
                       "if len(now) != 1 or NAMES[type(now[0])] != KIND['t']:\n"
                       f"    problems.append('final {holder} %r, KIND %r' % ({holder}, KIND['t']))")
        schedule = ["op_retype", "op_audit"]
    body = f"SPIN = {spin}\n" + state + "\n\n\n" + "\n\n".join(ops) + "\n\n" + check
    return f"kind={kind} payload={payload} replace={replace.splitlines()[-1]!r} spin={spin}", body, \
        schedule, False, True


#: Keys that are equal (same hash, ``==``) but of different types, by slot.
_ALIAS_KEYS = {
    "numbers": ("(1, 1.0, True, fractions.Fraction(1), decimal.Decimal(1))",
                "(2, 2.0, fractions.Fraction(2), decimal.Decimal(2), complex(2, 0))",
                "(3, 3.0, fractions.Fraction(6, 2), decimal.Decimal('3.0'), complex(3))"),
    "strings": ("('a', Name('a'), Tag.A, 'ab'[:1])", "('b', Name('b'), Tag.B, ''.join(['b']))",
                "('c', Name('c'), Tag.C, 'c'.lower())"),
    "tuples": ("((1, 'x'), (1.0, 'x'), (True, Name('x')))", "((2, 'y'), (2.0, 'y'), (2, Name('y')))",
               "((3, 'z'), (3.0, 'z'), (decimal.Decimal(3), 'z'))"),
    "frozensets": ("(frozenset({1}), frozenset({1.0}), frozenset({True}))",
                   "(frozenset({2}), frozenset({2.0}), frozenset([2, 2.0]))",
                   "(frozenset({3}), frozenset({3.0}), frozenset(range(3, 4)))"),
}


def aliases(rng: random.Random) -> tuple[str, str, list[str], bool, bool]:
    """A shared dict (or Counter, defaultdict, OrderedDict) read and written
    through keys equal to each other but of different types (``1``, ``1.0``,
    ``True``, ``Fraction(1)``; ``'a'``, a ``str`` subclass, a ``StrEnum``):
    one key to Python, so one location to the STM."""
    family = rng.choice(sorted(_ALIAS_KEYS))
    kind = rng.choice(("dict", "dict", "Counter", "defaultdict", "OrderedDict", "stmdict"))
    spin = rng.choice(SPINS)
    ctor = {"dict": "{}", "Counter": "Counter()", "defaultdict": "defaultdict(int)",
            "OrderedDict": "OrderedDict()", "stmdict": "stmdict()"}[kind]
    move = rng.choice(("x = D[ka]\n_spin(SPIN)\nD[kb] = x - amt\nD[kc] += amt",
                       "x = D.get(ka)\n_spin(SPIN)\nD[kb] = x - amt\nD[kc] = D[kd] + amt",
                       "x = D.pop(ka)\n_spin(SPIN)\nD[kb] = x - amt\nD[kc] += amt",
                       "x = D.setdefault(ka, 0)\n_spin(SPIN)\nD.update({kb: x - amt})\nD[kc] += amt",
                       "D[ka] -= amt\n_spin(SPIN)\nD[kc] = D.get(kd, 0) + amt"))
    if kind == "Counter":   # Counter.update adds
        move = move.replace("D.update({kb: x - amt})", "D[kb] = x - amt")
    audit = rng.choice(("total = sum(D[k] for k in pick_all(i))", "total = sum(D.values())",
                        "total = sum(map(D.get, pick_all(i)))", "total = sum(v for _, v in D.items())",
                        "total = sum(D[k] for k in D)"))
    state = (f"import decimal\nimport enum\nimport fractions\n\nSPIN = {spin}\n\n\n"
             "class Name(str):\n    pass\n\n\n"
             "class Tag(enum.StrEnum):\n    A = 'a'\n    B = 'b'\n    C = 'c'\n\n\n"
             f"SLOTS = [{', '.join(_ALIAS_KEYS[family])}]\nN = len(SLOTS)\nTOTAL = 100 * N\n"
             f"D = {ctor}\nfor _slot in SLOTS:\n    D[_slot[0]] = 100\nMOVES = [0]\n\n\n"
             "def pick(j, i):\n    keys = SLOTS[j % N]\n    return keys[(i // 5 + j) % len(keys)]\n\n\n"
             "def pick_all(i):\n    return [pick(j, i + j) for j in range(N)]")
    ops = [_def("op_move", "a = i % N", "b = (a + 1) % N", "amt = 1 + i % 4",
                "ka, kb = pick(a, i), pick(a, i + 7)", "kc, kd = pick(b, i + 3), pick(b, i + 11)",
                move, "MOVES[0] += 1",
                "if len(D) != N:\n    _torn('own move left %d keys: %r' % (len(D), list(D)))"),
           _def("op_audit", audit, "if total != TOTAL or len(D) != N:\n"
                "    _torn('%d keys sum to %r' % (len(D), total))")]
    check = _check("total = sum(D.values())",
                   "if total != TOTAL or len(D) != N:\n"
                   "    problems.append('final D %r sums to %r' % (dict(D), total))")
    body = state + "\n\n\n" + "\n\n".join(ops) + "\n\n" + check
    return f"keys={family} kind={kind} move={move.splitlines()[0]!r} audit={audit!r} spin={spin}", \
        body, ["op_move", "op_move", "op_audit"], False, True


FAMILIES: dict[str, Family] = {
    "bank": bank, "buffer": buffer, "mirror": mirror, "pair": pair, "lazy": lazy,
    "ordereddict": ordereddict, "counter": counter, "deque": deque_family,
    "defaultdict": defaultdict_family, "objects": objects, "classattr": classattr,
    "globals": globals_family, "closures": closures, "exceptions": exceptions,
    "inevitable": inevitable, "calls": calls, "readers": readers,
    "stdlib": stdlib, "dunders": dunders, "generators": generators, "classes": classes,
    "callcounts": callcounts, "swallow": swallow, "records": records,
    "aliases": aliases,
    **{f"escapes-{name.replace('_', '-')}": functools.partial(_escapes, mechanism=name)
       # (not bytearray += : on plain threads, 3.13t itself can hang on it;
       # tests/stm/adversarial/bytearray_iadd.py covers it under the STM)
       for name in ("publish_then_fill", "kept_view", "wraps_counter")},
}


def generate(family: str, seed: int, *, calls_per_thread: int = 40) -> Program:
    """The program of ``family`` drawn from ``seed`` (deterministic)."""
    rng = random.Random(f"{family}:{seed}")
    variant, body, schedule, raises, queue_ok = FAMILIES[family](rng)
    threads = rng.choice((2, 4))
    use_queue = queue_ok and rng.random() < 0.3
    return Program(family=family, seed=seed, variant=variant, body=body, schedule=schedule,
                   threads=threads, calls_per_thread=calls_per_thread, use_queue=use_queue,
                   raises=raises)
