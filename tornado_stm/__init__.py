"""tornado-stm: unchanged Tornado applications on every core.

Handlers keep the illusion of a single-threaded event loop: framework code
runs under one world lock, application code runs in optimistic atomic
sections checked by a software transactional memory (``tornado_stm.stm``).
See docs/architecture.md for the map of the packages.
"""

__version__ = "0.1.0"


def install(*, threads=None, pipelining=True):
    """Make the next asyncio/Tornado event loops transactional (see tornado_stm.loop.install)."""
    from tornado_stm.loop import install as install_policy  # lazy: keep `import tornado_stm` cheap
    return install_policy(threads=threads, pipelining=pipelining)


def new_event_loop(*, threads=None, pipelining=True):
    """A new TransactionalEventLoop, usable as asyncio.run(..., loop_factory=...)."""
    from tornado_stm.loop import new_event_loop as make_loop
    return make_loop(threads=threads, pipelining=pipelining)
