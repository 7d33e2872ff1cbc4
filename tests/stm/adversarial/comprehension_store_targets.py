"""A comprehension whose target is an attribute (`[.. for CFG.cur in items]`)
or an item (`{k: v for k, D["last"] in pairs}`), which leaves it bound to the
last item, as a `for` statement would. Writers: such a comprehension, spin,
`LOG.append(i)`. Readers: CFG.cur == D["last"] == LOG[-1].
Serial invariant: CFG.cur is always the last writer's i, i.e. LOG[-1]; and
after its own comprehension a writer reads CFG.cur == i.
Attacks: the rewriter rewrites `for obj.attr in` statements through set_attr, but
left a comprehension's attribute or item target as a plain store, in place
(barriers.stores_in_place now runs such a section inevitably). Red-team round 19.
"""
import sys
import transaction

class Cfg:
    pass

CFG = Cfg()
CFG.cur = -1
D = {"last": -1}
LOG = [-1]
BAD = []

def writer(i):
    _ = [0 for CFG.cur in [i]]
    _ = {k: v for k, D["last"] in [(i, i)] for v in [k]}
    x = 0
    for j in range(300):
        x += j
    if CFG.cur != i or D["last"] != i:
        BAD.append(("own", i, CFG.cur, D["last"]))
    LOG.append(i)

def reader(i):
    a = CFG.cur
    b = LOG[-1]
    c = D["last"]
    if not a == b == c:
        BAD.append(("torn", i, a, b, c))

def main():
    for i in range(400):
        transaction.add(writer if i % 2 else reader, i)
    transaction.run()
    if CFG.cur != LOG[-1]:
        BAD.append(("final", CFG.cur, LOG[-1]))
    if BAD:
        print("BAD", len(BAD), BAD[:4])
        sys.exit(1)
    print("OK", CFG.cur)

main()
