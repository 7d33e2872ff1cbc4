"""Fixtures for the STM tests: the test applications, instrumented or plain."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tornado_stm import instrument
from tornado_stm.stm import policy

APPS = Path(__file__).parent / "stmapps"

instrument.install(["tests.stm.stmapps.*"])
policy.register("tests.stm.helpers.pause", "pure")


def instrumented(name: str) -> ModuleType:
    """A test application module, instrumented."""
    return importlib.import_module(f"tests.stm.stmapps.{name}")


def plain(name: str) -> ModuleType:
    """The same source loaded a second time without instrumentation."""
    module_name = f"plain_stmapps_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, APPS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def threads_count() -> int:
    return 4
