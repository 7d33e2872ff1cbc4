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
