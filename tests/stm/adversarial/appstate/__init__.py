"""Application state in modules of their own, for the corpus programs that
rebind another module's globals (``modattr_other``). Instrumented, like
every package next to a program run by ``tornado-stm exec``."""
