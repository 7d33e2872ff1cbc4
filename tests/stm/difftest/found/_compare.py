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

from tests.stm.difftest.runner import load_source


def _load(source: str, instrumented: bool) -> types.ModuleType:
    tag = "stm" if instrumented else "plain"
    return load_source(source, f"found_{tag}", Path(tempfile.mkdtemp()),
                       instrumented=instrumented)


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
