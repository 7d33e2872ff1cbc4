"""An instance-level override of a method removed with ``del`` so that the
class's method answers again, then put back (seventh round).

Serial invariant: after ``del g.greet`` the class's method answers: every
call records "hi" and none raises.

Attacks: a read of a name the section itself deleted. For a method the engine
fell back to ``__getattr__`` only and raised AttributeError; it now binds the
class's attribute as Python does.
"""
import transaction

K = 200


class Greeter:
    def greet(self):
        return "hi"


g = Greeter()
g.greet = lambda: "yo"
out = []


def job(i):
    del g.greet
    out.append(g.greet())
    g.greet = lambda: "yo"


def main():
    for i in range(K):
        transaction.add(job, i)
    try:
        transaction.run()
    except Exception as exc:
        print("BAD raised %s: %s" % (type(exc).__name__, exc))
        return
    print("OK" if out == ["hi"] * K else "BAD %r" % out[:3])


main()
