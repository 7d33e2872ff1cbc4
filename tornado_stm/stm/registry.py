"""Which code is application code: the code objects the instrumenter produced.

And which is the engine's own: :func:`is_engine_code` is the one
definition of a tornado-stm frame, skipped when the PYPYSTM log names the
user's line and dropped from the tracebacks of application exceptions.

The instrumenter (``tornado_stm.instrument``) registers every code object
it compiles, nested ones included; the section entry wrapper registers
its own. The barriers use this to tell a call into instrumented code (a
plain call, no policy needed) from a call into uninstrumented code (which
the safe-call policy must judge).
"""

from __future__ import annotations

import os
from types import CodeType, FrameType, FunctionType, ModuleType
from typing import Optional

#: Where tornado-stm's own code lives: every module of the package is engine code.
ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

#: Code objects of instrumented functions (and of the section entry wrapper).
INSTRUMENTED_CODES: set[CodeType] = set()


#: Modules whose attributes sections read through the read log: every
#: instrumented module (their globals are application state), and any other
#: module once instrumented code has written one of its attributes or taken
#: its ``__dict__`` (barriers.versioning_module). A library module
#: (``heapq``, ``json``, ``math``) that no section writes is read plainly:
#: ``heapq.heappush`` costs no read-log entry.
VERSIONED_MODULES: set[ModuleType] = set()


#: The file of an instrumented module -> the globals its functions read
#: plainly, without a barrier: those that no function of it declares
#: ``global`` (docs/semantics.md, limit 4), when it does not name ``globals``.
PLAINLY_READ_GLOBALS: dict[str, frozenset[str]] = {}


def reads_plainly(module: ModuleType, name: str) -> bool:
    """True when the functions of instrumented ``module`` read its global
    ``name`` without a barrier: rebinding it must not go unseen by them."""
    return name in PLAINLY_READ_GLOBALS.get(module.__dict__.get("__file__"), ())


def has_plain_globals(module: ModuleType) -> bool:
    """True when the functions of instrumented ``module`` read some globals plainly."""
    return bool(PLAINLY_READ_GLOBALS.get(module.__dict__.get("__file__"), ()))


def register_code(code: CodeType) -> None:
    """Register ``code`` and every code object nested in it."""
    INSTRUMENTED_CODES.add(code)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            register_code(const)


def is_instrumented(fn: object) -> bool:
    """True for a function whose code the instrumenter produced."""
    return type(fn) is FunctionType and fn.__code__ in INSTRUMENTED_CODES


def python_methods(kind: type, names: "tuple[str, ...]") -> list[FunctionType]:
    """The Python functions that ``kind`` or its bases define for ``names``
    (instrumented or not; a C type's slot wrappers are not functions)."""
    return [method for klass in kind.__mro__ for method in map(klass.__dict__.get, names)
            if type(method) is FunctionType]


def is_engine_code(code: CodeType) -> bool:
    """True for code of tornado-stm itself (barriers, sections, loops), not the application's."""
    return code.co_filename.startswith(ENGINE_DIR)


def application_frame(frame: Optional[FrameType]) -> tuple[Optional[FrameType], int]:
    """``frame``, or the first of its callers that is not the engine's own (a
    call barrier's, a step wrapper's), and how many engine frames it passed."""
    passed = 0
    while frame is not None and is_engine_code(frame.f_code):
        frame = frame.f_back
        passed += 1
    return frame, passed
