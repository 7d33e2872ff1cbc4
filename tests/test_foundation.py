"""The ground every other part stands on: interpreters, imports, commands."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import FREE_THREADED


@pytest.mark.freethreaded
def test_free_threaded_interpreter_runs_without_gil() -> None:
    assert sys._is_gil_enabled() is False


@pytest.mark.freethreaded
def test_tornado_import_keeps_gil_disabled() -> None:
    # A C extension without Py_MOD_GIL_NOT_USED would re-enable the GIL on
    # import; check in a fresh process so earlier imports do not hide it.
    code = (
        "import sys, tornado.web, tornado.websocket, tornado.httpserver, tornado.ioloop;"
        "print(sys._is_gil_enabled())"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    assert out.strip() == "False", "importing Tornado re-enabled the GIL"


def test_tornado_stm_info_reports_gil_state() -> None:
    out = subprocess.run([sys.executable, "-m", "tornado_stm", "info", "--json"],
                         check=True, capture_output=True, text=True).stdout
    import json
    facts = json.loads(out)
    assert facts["gil_enabled"] is (not FREE_THREADED)
    assert facts["executable"] == sys.executable


def test_cli_help_lists_commands() -> None:
    out = subprocess.run([sys.executable, "-m", "tornado_stm", "--help"],
                         check=True, capture_output=True, text=True).stdout
    assert "info" in out
