"""Shared pytest set-up: the engine started, interpreter facts, the ``freethreaded`` marker."""

from __future__ import annotations

import os
import sys

import pytest

from tornado_stm import stm

#: True on a free-threaded CPython running with the GIL disabled.
FREE_THREADED = hasattr(sys, "_is_gil_enabled") and not sys._is_gil_enabled()

#: CPUs this process may run on: a race between threads needs two at once.
CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def pytest_configure(config: pytest.Config) -> None:
    stm.start()   # as every entry point does, before application code is loaded


def pytest_report_header(config: pytest.Config) -> str:
    state = "free-threaded, GIL disabled" if FREE_THREADED else "GIL enabled"
    return f"tornado-stm interpreter: {sys.executable} ({state})"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if FREE_THREADED:
        return
    skip = pytest.mark.skip(reason="needs a free-threaded CPython with the GIL disabled")
    for item in items:
        if "freethreaded" in item.keywords:
            item.add_marker(skip)
