"""A differential tester for the STM: generated programs, run concurrently, checked.

``families`` is the grammar (one generator per construct family: containers,
``collections`` types, truthiness, operators, unpacking, lazy iterators,
objects and class attributes, globals, closures, exceptions, inevitable
calls, the standard library on shared containers, special methods called by
C code, generators, class machinery, call counts, swallowed exceptions,
equal-but-distinct records and keys); ``found`` holds minimal programs
reduced from what the families found; ``program`` is the shape of a
generated module; ``runner`` loads a program instrumented or plain and
drives it from threads, or serially as the reference; ``effects`` is an uninstrumented helper whose calls make a
section inevitable. ``python -m tests.stm.difftest FAMILY SEED`` prints a
program and runs it (see ``__main__``).
"""

from tests.stm.difftest.families import FAMILIES, generate
from tests.stm.difftest.program import Program
from tests.stm.difftest.runner import Outcome, load, run_concurrent, run_serial

__all__ = ["FAMILIES", "Outcome", "Program", "generate", "load", "run_concurrent", "run_serial"]
