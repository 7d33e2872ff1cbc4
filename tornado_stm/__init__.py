"""tornado-stm: unchanged Tornado applications on every core.

Handlers keep the illusion of a single-threaded event loop: framework code
runs under one world lock, application code runs in optimistic atomic
sections checked by a software transactional memory (``tornado_stm.stm``).
See docs/architecture.md for the map of the packages.
"""

__version__ = "0.1.0"
