"""Which code is application code: the code objects the instrumenter produced.

The instrumenter (``tornado_stm.instrument``) registers every code object
it compiles, nested ones included; the section entry wrapper registers
its own. The barriers use this to tell a call into instrumented code (a
plain call, no policy needed) from a call into uninstrumented code (which
the safe-call policy must judge).
"""

from __future__ import annotations

from types import CodeType, FunctionType

#: Code objects of instrumented functions (and of the section entry wrapper).
INSTRUMENTED_CODES: set[CodeType] = set()


def register_code(code: CodeType) -> None:
    """Register ``code`` and every code object nested in it."""
    INSTRUMENTED_CODES.add(code)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            register_code(const)


def is_instrumented(fn: object) -> bool:
    """True for a function whose code the instrumenter produced."""
    return type(fn) is FunctionType and fn.__code__ in INSTRUMENTED_CODES
