"""An ABC whose __subclasshook__ consults shared state (a STRICT flag that other
sections flip). Each checker section asks isinstance(obj, Pluggable) for ITS OWN
class (first and only check of that class), then reads the flag itself.
Serial invariant: the hook runs at the checker's serial point and that is the
first check of that class, so isinstance(...) == (not STRICT["on"]) as the same
section reads it.
Attacks: ABCMeta.__instancecheck__ is taken to answer "from the class and its
registry alone" (specials._CHECKS_BY_TYPE), so the section stays optimistic; but
C _abc calls the application's __subclasshook__ and caches its answer in the ABC
(_abc_cache / _abc_negative_cache) in place. An attempt that aborts leaves its
answer cached, computed from a state the retry (and the serial order) no longer has.
Red-team round 19 (an ABC with an application __subclasshook__ now makes the
section inevitable first).
"""
import abc
import transaction

STRICT = {"on": False}

class Pluggable(abc.ABC):
    @classmethod
    def __subclasshook__(cls, C):
        if STRICT["on"]:
            return NotImplemented
        return True

K = 300
CLASSES = [type("Foo%d" % k, (), {}) for k in range(K)]
OBJS = [c() for c in CLASSES]
BAD = []
DONE = []

def flip(i):
    x = 0
    for j in range(300):
        x += j
    STRICT["on"] = not STRICT["on"]

def check(i, k):
    r = isinstance(OBJS[k], Pluggable)
    x = 0
    for j in range(300):
        x += j
    s = STRICT["on"]
    if r != (not s):
        BAD.append((k, r, s))
    DONE.append(k)

def main():
    k = 0
    for i in range(2 * K):
        if i % 2:
            transaction.add(check, i, k)
            k += 1
        else:
            transaction.add(flip, i)
    transaction.run()
    print("BAD" if BAD else "OK", len(BAD), BAD[:4], len(DONE))

main()
