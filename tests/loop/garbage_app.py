"""An application that reports the cyclic garbage its requests leave.

Stock Tornado frees a short request's objects by their reference counts
alone (``finish()`` even breaks the handler's one cycle, its ``ui``). On
free-threaded CPython 3.13 every collection of cyclic garbage visits the
whole heap with every thread stopped, so a request that leaves a cycle
behind costs every core. ``/garbage/start`` empties the collector and
keeps what it would free from then on; ``/garbage`` collects and answers
how many objects of each type were cyclic garbage since.

Only what a cycle kept alive counts. On the free-threaded build the
collector also finds objects whose last reference another thread dropped
while the thread that made them was blocked (in ``epoll_wait``, say):
their reference count waits in that thread's queue to be merged, and the
collector frees them instead. No cycle holds those, and they are freed as
soon as that thread runs again; they are told apart by the shape of the
garbage (:func:`kept_by_cycles`).
"""

from __future__ import annotations

import collections
import gc

import tornado.web


class Hello(tornado.web.RequestHandler):
    def get(self) -> None:
        self.set_header("X-Hello", "1")
        self.write("Hello, world")


class StartCounting(tornado.web.RequestHandler):
    def get(self) -> None:
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.garbage.clear()
        self.write("counting")


def kept_by_cycles(garbage: list) -> list:
    """The objects of ``garbage`` in a reference cycle or reachable only from one.

    Garbage no other garbage refers to was freed by its reference count
    alone (once merged); peeling it off, again and again, leaves the cycles
    and what hangs off them.
    """
    by_id = {id(item): item for item in garbage}
    referents = {key: [id(ref) for ref in gc.get_referents(item) if id(ref) in by_id]
                 for key, item in by_id.items()}
    referred = collections.Counter(ref for refs in referents.values() for ref in refs)
    free = [key for key in by_id if not referred[key]]
    left = set(by_id)
    while free:
        key = free.pop()
        left.discard(key)
        for ref in referents[key]:
            referred[ref] -= 1
            if not referred[ref]:
                free.append(ref)
    return [by_id[key] for key in left]


class Garbage(tornado.web.RequestHandler):
    def get(self) -> None:
        gc.collect()
        cyclic = kept_by_cycles(gc.garbage)
        kinds = collections.Counter(type(item).__qualname__ for item in cyclic)
        self.write({"objects": len(cyclic), "kinds": dict(kinds),
                    "freed_by_counts": len(gc.garbage) - len(cyclic)})


def make_app() -> tornado.web.Application:
    return tornado.web.Application([(r"/", Hello), (r"/garbage/start", StartCounting),
                                    (r"/garbage", Garbage)])
