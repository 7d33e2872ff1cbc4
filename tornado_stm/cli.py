"""The ``tornado-stm`` command line.

Each subcommand lives in its own module, which exposes
``register(subparsers)``: it adds its parser and sets ``func`` on it, a
callable taking the parsed ``argparse.Namespace`` and returning an exit
status. This module only wires them together, so adding a command never
means editing another command's code.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

#: Modules that contribute a subcommand, in the order ``--help`` lists them.
SUBCOMMAND_MODULES = (
    "tornado_stm.serve",        # tornado-stm serve MODULE:APP
    "tornado_stm.exec_script",  # tornado-stm exec script.py (PyPy-STM style)
    "tornado_stm.info",         # tornado-stm info
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tornado-stm",
        description="Run unchanged Tornado applications on every core, "
        "with handlers that appear serial.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more logging (repeat for debug)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # a command whose module has not landed yet
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(name)s: %(levelname)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)
