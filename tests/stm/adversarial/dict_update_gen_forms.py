"""``update`` of a shared dict-like container fed by a generator that reads the
container itself (numbering new keys by the current size, skipping keys already
present). One section per form; each compared with the same form on a private
container (plain CPython).
Serial invariant: each form's result equals the private reference.
Attacks: dict.update / |= / OrderedDict.update / Counter.update / defaultdict.update
on a shared container are buffered: the generator feeding them reads the container
through the barriers while the C mutator is half done.
"""
import collections
import sys
import transaction

WORDS = ["a", "b", "a", "c", "b", "d"]
RESULTS = {}


def make():
    return {"D": {"z": 0}, "OD": collections.OrderedDict(z=0), "DD": collections.defaultdict(int, z=0),
            "C": collections.Counter(z=1), "D2": {"z": 0}, "D3": {"z": 0}, "D4": {"z": 0}, "D5": {"z": 0}, "D6": {"z": 0},
            "D7": {"z": 0}, "D8": {"z": 0}, "D9": {"z": 0}}


SH = make()


def f_dict_update(st):
    D = st["D"]
    D.update((w, len(D)) for w in WORDS if w not in D)
    return dict(D)


def f_odict_update(st):
    OD = st["OD"]
    OD.update((w, len(OD)) for w in WORDS if w not in OD)
    return dict(OD)


def f_defaultdict_update(st):
    DD = st["DD"]
    DD.update((w, len(DD)) for w in WORDS if w not in DD)
    return dict(DD)


def f_counter_update(st):
    C = st["C"]
    C.update(w for w in WORDS if C[w] < 1)
    return dict(C)


def f_dict_ior(st):
    D2 = st["D2"]
    D2 |= ((w, len(D2)) for w in WORDS if w not in D2)
    return dict(D2)


def f_dict_update_list(st):
    D3 = st["D3"]
    D3.update([(w, len(D3)) for w in WORDS if w not in D3])   # materialized first
    return dict(D3)


def f_dict_update_unbound(st):
    D4 = st["D4"]
    dict.update(D4, ((w, len(D4)) for w in WORDS if w not in D4))
    return dict(D4)


def f_setdefault_map(st):
    D5 = st["D5"]
    list(map(D5.setdefault, WORDS, (len(D5) for _ in WORDS)))
    return dict(D5)


def f_dict_init_again(st):
    D6 = st["D6"]
    D6.__init__((w, len(D6)) for w in WORDS if w not in D6)
    return dict(D6)


def f_fromkeys_update(st):
    D7 = st["D7"]
    D7.update(zip(WORDS, (len(D7) for _ in WORDS)))
    return dict(D7)


def parse(words):
    for w in words:
        if w == "c":
            raise ValueError("bad word")
        yield w, w.upper()


def f_update_partial(st):
    D8 = st["D8"]
    try:
        D8.update(parse(WORDS))
    except ValueError:
        pass
    return dict(D8)


def bad_items():
    yield "ab"
    yield "abc"
    1 / 0


def f_dict_of_gen_error(st):
    try:
        dict(bad_items())
    except Exception as e:
        return type(e).__name__


def f_update_of_gen_error(st):
    D9 = st["D9"]
    try:
        D9.update(bad_items())
    except Exception as e:
        return type(e).__name__, dict(D9)


FORMS = {k[2:]: v for k, v in list(globals().items()) if k.startswith("f_")}


def section(name):
    RESULTS["got"][name] = FORMS[name](SH)


def main():
    st = make()
    RESULTS["want"] = {k: f(st) for k, f in FORMS.items()}
    RESULTS["got"] = {}
    for k in FORMS:
        transaction.add(section, k)
    transaction.run()
    want, got = RESULTS["want"], RESULTS["got"]
    diffs = [(k, want[k], got.get(k)) for k in want if want[k] != got.get(k)]
    print("BAD" if diffs else "OK", diffs)
    return 1 if diffs else 0


sys.exit(main())
