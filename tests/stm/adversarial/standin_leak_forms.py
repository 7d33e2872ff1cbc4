"""C callables with effects (print, list.append, dict.__setitem__, next...) handed to pure
library code that KEEPS them and gives them back nested or through an iterator:
itertools.repeat(cb), zip_longest(fillvalue=cb), accumulate(initial=cb), dict.fromkeys(k, cb),
sorted/min/max with default=cb, [cb] * n via operator.mul, tuple((cb,)).
Serial invariant: what comes back is the callable itself (`x is print`, x.__name__,
x.__self__, type(x).__name__, inspect.isbuiltin) -- each form's answers equal the same
form run outside any section.
Attacks: calls.through_the_barrier replaces such callables by CalledThroughTheBarrier
stand-ins for the call, and _callables_given_back restores them only in the top level of
a returned list/dict (or when the result is one): a stand-in kept deeper, or yielded by a
returned iterator, reaches application code.
"""
import inspect
import itertools
import operator
import sys
import transaction

L = []
R = {}


def describe(x):
    try:
        return (x is print or x == L.append, getattr(x, "__name__", "?"),
                type(x).__name__, inspect.isbuiltin(x), getattr(x, "__self__", "?") is L or x is print)
    except Exception as e:
        return ("err", type(e).__name__)


def forms():
    out = {}
    out["repeat_print"] = describe(next(itertools.repeat(print)))
    out["repeat_append"] = describe(next(itertools.repeat(L.append, 2)))
    out["zip_longest_fill"] = describe(list(itertools.zip_longest([1, 2], [3], fillvalue=L.append))[1][1])
    out["accumulate_initial"] = describe(next(itertools.accumulate([], initial=print)))
    out["fromkeys"] = describe(dict.fromkeys("ab", print)["a"])
    out["max_default"] = describe(max([], default=L.append))
    out["mul_list"] = describe(operator.mul([print], 2)[1])
    out["tuple_of"] = describe(tuple([print])[0])
    out["chain_nested"] = describe(next(itertools.chain([print])))
    out["islice_repeat"] = describe(list(itertools.islice(itertools.repeat(print), 2))[1])
    out["zip_repeat"] = describe(list(zip([1], itertools.repeat(L.append)))[0][1])
    out["sorted_pairs"] = describe(sorted([(1, print)], key=operator.itemgetter(0))[0][1])
    out["cycle"] = describe(next(itertools.cycle((print,))))
    return out


def section():
    R["sec"] = forms()


def main():
    R["out"] = forms()
    transaction.add(section)
    transaction.run()
    diffs = [(k, R["out"][k], R["sec"].get(k)) for k in R["out"] if R["out"][k] != R["sec"].get(k)]
    print("BAD" if diffs else "OK", len(diffs), diffs)
    return 1 if diffs else 0


sys.exit(main())
