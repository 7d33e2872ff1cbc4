"""A factory classmethod replaced on the class at run time, then called through the class.

Serial invariant (plain Python): after ``Shape.make = classmethod(make_v2)``
the call ``Shape.make()`` binds the class and returns ``("v2", "Shape")``;
a staticmethod swapped the same way returns its function. One thread suffices.

Attacks: a classmethod written to the class went to the redo log and came
back unbound ("'classmethod' object is not callable"). Now a reshape: in
place and bound as Python binds it.
"""
import transaction

OUT = []


def make_v1(cls):
    return ("v1", cls.__name__)


def make_v2(cls):
    return ("v2", cls.__name__)


def norm_v2(x):
    return ("n2", x)


class Shape:
    make = classmethod(make_v1)
    norm = staticmethod(lambda x: ("n1", x))


def step(i):
    Shape.make = classmethod(make_v2)
    Shape.norm = staticmethod(norm_v2)
    try:
        a = Shape.make()
    except TypeError as e:
        a = ("TypeError", str(e))
    b = Shape.norm(i)
    c = Shape.norm is norm_v2
    OUT.append((a, b[0], c))


def main():
    for i in range(5):
        transaction.add(step, i)
    transaction.run()
    ok = all(o == (("v2", "Shape"), "n2", True) for o in OUT)
    print("OK" if ok else "BAD", OUT[:1])


main()
