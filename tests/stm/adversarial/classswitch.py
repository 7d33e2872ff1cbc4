"""The state pattern: shared objects change class by assigning ``__class__``.

Serial invariant: the number of machines whose class is Running equals a
shared count of active ones, and a machine sees its own class switch.

Attacks: ``type(obj)``, ``isinstance`` and method lookups read the class
without a version. An engine that switched the class in place, inevitably
but without making overlapping sections abort, let them see the new class
with the old counters (a 0/1 counter reached 2 to 25), and on 4 threads a
method lookup found the other class's methods (AttributeError).
"""
import transaction

bad = []


class Idle:
    busy = False

    def start(self):
        self.__class__ = Running
        self.runs += 1


class Running:
    busy = True

    def stop(self):
        self.__class__ = Idle


class Machine(Idle):
    pass


machines = []
for _ in range(4):
    m = Idle.__new__(Idle)
    m.runs = 0
    machines.append(m)
active = [0]


def w(i):
    m = machines[i % 4]
    if type(m) is Idle:
        m.start()
        active[0] += 1
        if not m.busy or type(m) is not Running:
            bad.append(("own-start", type(m).__name__, m.busy))
    else:
        m.stop()
        active[0] -= 1
        if m.busy or not isinstance(m, Idle):
            bad.append(("own-stop", type(m).__name__, m.busy))


def r(i):
    n = sum(1 for m in machines if m.busy)
    if n != active[0]:
        bad.append(("torn", n, active[0]))


for i in range(3000):
    transaction.add(w if i % 3 else r, i)
transaction.run()
n = sum(1 for m in machines if m.busy)
if n != active[0]:
    bad.append(("final", n, active[0]))
print("BAD %r" % bad[:4] if bad else "OK")
