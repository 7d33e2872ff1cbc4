"""Library helpers for the adversarial programs: a module the engine never
instruments (it is outside the programs' directory), so its code runs as a
library's does, without barriers."""


def restock(stock, sku, n=1):
    """stock[sku] += n, reading first, then a little work, then writing."""
    v = stock[sku]
    for _ in range(200):
        pass
    stock[sku] = v + n
    return v + n


def bump_all(objs, attr):
    """For each object: obj.<attr> += 1 (read, a little work, write)."""
    n = 0
    for obj in objs:
        v = getattr(obj, attr)
        for _ in range(100):
            pass
        setattr(obj, attr, v + 1)
        n += 1
    return n


def add_via(get_target, key):
    """get_target()[key] += 1: the library asks a callback where to count."""
    target = get_target()
    v = target[key]
    for _ in range(200):
        pass
    target[key] = v + 1
    return v + 1


def set_on(obj, name, value):
    """setattr(obj, name, value), a little work first."""
    for _ in range(100):
        pass
    setattr(obj, name, value)


def _slow_bump(d, key):
    v = d[key]
    for _ in range(200):
        pass
    d[key] = v + 1


def bump_from_gen(gen_fn, key):
    """for d in gen_fn(): d[key] += 1 -- the targets come from an application generator."""
    for d in gen_fn():
        _slow_bump(d, key)


def bump_via_out(fill, key):
    """fill(box) puts the target into a list of ours; then box[0][key] += 1."""
    box = []
    fill(box)
    _slow_bump(box[0], key)


class Holder:
    target = None


def bump_via_holder(fill, key):
    """fill(holder) sets holder.target; then holder.target[key] += 1."""
    h = Holder()
    fill(h)
    _slow_bump(h.target, key)


def bump_attr(obj, name):
    """obj.<name> += 1, a little work between the read and the write."""
    v = getattr(obj, name)
    for _ in range(200):
        pass
    setattr(obj, name, v + 1)
    return v + 1


def bump_attr_via_ref(ref, name):
    """ref is a weakref.ref: obj = ref(); obj.<name> += 1."""
    bump_attr(ref(), name)


def bump_nested(mapping, outer, key):
    """mapping[outer][key] += 1 (mapping may be a read-only view)."""
    _slow_bump(mapping[outer], key)
