"""``tornado-stm info``: what this interpreter offers tornado-stm."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys


def interpreter_facts() -> dict:
    """Facts about the running interpreter that decide how tornado-stm runs."""
    gil_check = getattr(sys, "_is_gil_enabled", None)
    return {
        "implementation": platform.python_implementation(),
        "version": platform.python_version(),
        "executable": sys.executable,
        "free_threaded_build": bool(_config_var("Py_GIL_DISABLED")),
        "gil_enabled": True if gil_check is None else bool(gil_check()),
        "cpus": os.cpu_count() or 1,
    }


def describe_interpreter(facts: dict | None = None) -> str:
    """One line for humans: ``CPython 3.13.5 (free-threaded, GIL disabled) at /path``."""
    facts = facts or interpreter_facts()
    if facts["free_threaded_build"]:
        kind = "free-threaded, GIL " + ("enabled" if facts["gil_enabled"] else "disabled")
    else:
        kind = "GIL build"
    return f"{facts['implementation']} {facts['version']} ({kind}) at {facts['executable']}"


def version_line() -> str:
    """``tornado-stm 0.1.0 (Tornado 6.5.2, CPython 3.13.5 free-threaded)``: every ``--version``."""
    import tornado

    from tornado_stm import __version__
    facts = interpreter_facts()
    build = " free-threaded" if facts["free_threaded_build"] else ""
    return (f"tornado-stm {__version__} (Tornado {tornado.version}, "
            f"{facts['implementation']} {facts['version']}{build})")


def _config_var(name: str):
    import sysconfig
    return sysconfig.get_config_var(name)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("info", help="show the interpreter and whether it runs in parallel")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps(interpreter_facts()))
    else:
        print(describe_interpreter())
    return 0
