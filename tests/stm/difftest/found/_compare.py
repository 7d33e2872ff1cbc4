"""Run a tiny module's sections one after another, plain and under the STM, and compare.

``compare(source, ops, shown)`` loads ``source`` twice (plain Python, and
rewritten for the STM), calls each op of ``ops`` once, from this
uninstrumented frame (so each call is one atomic section), and prints the
expressions of ``shown`` evaluated in both modules. It returns 1 when they
differ: no thread is involved, so a serial run is the only reference.
"""

from __future__ import annotations

import sys
import tempfile
import types
from pathlib import Path

from tornado_stm.instrument import compile_instrumented, prepare_namespace


def _load(source: str, instrumented: bool) -> types.ModuleType:
    name = f"found_{'stm' if instrumented else 'plain'}"
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(source)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    try:
        if instrumented:
            code = compile_instrumented(source, str(path))
            prepare_namespace(module.__dict__)
        else:
            code = compile(source, str(path), "exec", dont_inherit=True)
        exec(code, module.__dict__)
    finally:
        sys.modules.pop(name, None)
    return module


def compare(source: str, ops: list[str], shown: list[str]) -> int:
    results = {}
    for instrumented in (False, True):
        module = _load(source, instrumented)
        for op in ops:
            getattr(module, op)(0)
        results[instrumented] = [repr(eval(expr, vars(module))) for expr in shown]
    differs = results[False] != results[True]
    for expr, plain, stm in zip(shown, results[False], results[True]):
        mark = "  " if plain == stm else "!="
        print(f"{mark} {expr}: plain {plain}, stm {stm}")
    print("DIFFERS from a serial run" if differs else "same as a serial run")
    return 1 if differs else 0
