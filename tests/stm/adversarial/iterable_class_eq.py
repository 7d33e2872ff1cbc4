"""An application class that is iterable (defines __iter__) and compares and
prints itself (__eq__, __repr__): instances held in globals, compared and
formatted in sections.

Serial invariant (plain Python): V1 == V2, f"{V1}" == "Vec(1, 2)", V1 != V3.
Attacks: barriers.view/deep_view (via _read_in_place) replace an iterable
application object by iter(obj) before ==, != and f-string formatting.
Red-team round 17: wrong on every run (also before this session): view()
handed operators, comparisons and formatting an iterator over the object;
they now read it through barriers.operand, which keeps the object.
"""
import sys
import transaction


class Vec:
    def __init__(self, *xs):
        self.xs = list(xs)

    def __iter__(self):
        return iter(self.xs)

    def __eq__(self, other):
        return isinstance(other, Vec) and self.xs == other.xs

    def __repr__(self):
        return "Vec(%s)" % ", ".join(map(str, self.xs))


V1 = Vec(1, 2)
V2 = Vec(1, 2)
V3 = Vec(3)
OUT = []


def check(i):
    OUT.append((V1 == V2, V1 != V3, f"{V1}"))


def main():
    for i in range(4):
        transaction.add(check, i)
    transaction.run()
    want = [(True, True, "Vec(1, 2)")] * 4
    if OUT != want:
        print("BAD", OUT[:1]); sys.exit(1)
    print("OK", OUT[0])


main()
