"""The import hook: modules whose names match the patterns are loaded rewritten.

A ``sys.meta_path`` finder asks the normal path finder for the module's
spec, and when the module comes from a ``.py`` file and its name matches
one of the patterns (``fnmatch`` syntax: ``"myapp"``, ``"myapp.*"``), it
swaps in :class:`InstrumentingLoader`. That loader compiles the rewritten
AST (never a cached ``.pyc``, which holds the plain code), registers the
code objects as instrumented, and puts the barriers into the module's
namespace before running it.
"""

from __future__ import annotations

import fnmatch
import importlib.abc
import importlib.machinery
import logging
import operator
import sys
import threading
from types import CodeType, ModuleType
from typing import Optional, Sequence

from tornado_stm.instrument.rewriter import GLOBALS_NAME, RUNTIME_NAMES, rewrite_module
from tornado_stm.stm import barriers, start
from tornado_stm.stm.bindings import (audit_module_classes, audited_class, special_method,
                                      tested_method)
from tornado_stm.stm.registry import PLAINLY_READ_GLOBALS, VERSIONED_MODULES, register_code
from tornado_stm.stm.section import entry, entry_with_shared_cells, finalizer, module_body

logger = logging.getLogger(__name__)


def runtime_namespace() -> dict[str, object]:
    """The names the rewritten code refers to, for a module's globals."""
    start()    # the C barriers must be in place before they are handed out
    names: dict[str, object] = {name: getattr(barriers, attr) for name, attr in RUNTIME_NAMES.items()}
    names.update(_stm_entry=entry, _stm_entry_shared_cells=entry_with_shared_cells,
                 _stm_finalizer=finalizer, _stm_operator=operator,
                 _stm_slice=slice, _stm_tested=tested_method, _stm_special=special_method,
                 _stm_class=audited_class)
    return names


def compile_instrumented(source: str | bytes, filename: str) -> CodeType:
    """Rewrite and compile module source; the code objects are registered, and
    so are the globals its functions read plainly."""
    text = source.decode("utf-8") if isinstance(source, bytes) else source
    tree, plainly_read = rewrite_module(text, filename)
    code = compile(tree, filename, "exec", dont_inherit=True)
    register_code(code)
    PLAINLY_READ_GLOBALS[filename] = plainly_read
    return code


def prepare_namespace(namespace: dict) -> None:
    """Give a module namespace the runtime names before instrumented code runs in it."""
    namespace.update(runtime_namespace())
    namespace[GLOBALS_NAME] = namespace


def prepare_module(module: ModuleType) -> None:
    """``prepare_namespace`` for a module object, whose globals other modules
    then read through the read log (``registry.VERSIONED_MODULES``)."""
    prepare_namespace(module.__dict__)
    VERSIONED_MODULES.add(module)


class InstrumentingLoader(importlib.machinery.SourceFileLoader):
    """Loads a source module with its functions rewritten for the STM."""

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        return compile_instrumented(self.get_data(path), path)

    def exec_module(self, module: ModuleType) -> None:
        prepare_module(module)
        # Imported inside a section or a step (import_module, a pickle of
        # one of its classes): its plain body runs alone.
        barriers.plain_code_starts(f"the import of {module.__name__} (its body runs as plain code)")
        with module_body():                  # top-level code is not a section
            super().exec_module(module)
        audit_module_classes(module)         # its classes as its top level left them


class InstrumentingFinder(importlib.abc.MetaPathFinder):
    """Finds modules matching the patterns and gives them the instrumenting loader."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = list(patterns)
        self._busy = threading.local()

    def matches(self, fullname: str) -> bool:
        return any(fnmatch.fnmatchcase(fullname, pattern) for pattern in self.patterns)

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[ModuleType] = None) -> Optional[importlib.machinery.ModuleSpec]:
        if not self.matches(fullname):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec if spec is None else None
        spec.loader = InstrumentingLoader(spec.loader.name, spec.loader.path)
        return spec


_installed: list[InstrumentingFinder] = []


def package_patterns(package: str) -> list[str]:
    """The patterns that select a package and every module below it."""
    return [package, f"{package}.*"]


def install(patterns: Sequence[str]) -> InstrumentingFinder:
    """Instrument, from now on, the modules whose names match ``patterns``.

    Call it before the application is imported: modules already in
    ``sys.modules`` are not rewritten (a warning names them).
    """
    if isinstance(patterns, str):
        raise TypeError("install() takes a list of module name patterns, not a string")
    finder = InstrumentingFinder(patterns)
    already = sorted(name for name in list(sys.modules) if finder.matches(name))
    if already:
        logger.warning("already imported, so not instrumented: %s", ", ".join(already))
    sys.meta_path.insert(0, finder)
    _installed.append(finder)
    return finder


def uninstall(finder: Optional[InstrumentingFinder] = None) -> None:
    """Remove one finder (or all that install() added)."""
    for item in ([finder] if finder is not None else list(_installed)):
        if item in sys.meta_path:
            sys.meta_path.remove(item)
        if item in _installed:
            _installed.remove(item)
