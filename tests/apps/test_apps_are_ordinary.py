"""The demo apps stay ordinary single-threaded Tornado code.

The point of tornado-stm is that such code runs unchanged on every core; an
app that took locks, started threads, imported tornado-stm or used
coroutine handlers would prove nothing. The exception is ``asyncmix.py``,
whose coroutine handlers are the point: it measures that style.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

APP_FILES = sorted(pathlib.Path(__file__).resolve().parents[2].joinpath("apps").glob("*.py"))
FORBIDDEN_MODULES = {"threading", "multiprocessing", "concurrent", "_thread", "tornado_stm"}
#: Apps written in the coroutine style on purpose.
COROUTINE_APPS = {"asyncmix.py"}


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: p.name)
def test_app_module_takes_no_locks_and_imports_no_tornado_stm(path: pathlib.Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
        elif isinstance(node, ast.ClassDef):
            # Methods (handlers, game actions) are plain def: sections of
            # sync code scale, coroutine steps serialize.
            coroutines = [f.name for f in node.body if isinstance(f, ast.AsyncFunctionDef)]
            assert not coroutines or path.name in COROUTINE_APPS, f"{path.name}: {node.name} has async methods {coroutines}"
    assert not imported & FORBIDDEN_MODULES


def test_there_are_apps_to_check() -> None:
    assert {"primes.py", "astar.py", "astar_game.py", "astar_large.py", "asyncmix.py",
            "demo.py"} <= {p.name for p in APP_FILES}
