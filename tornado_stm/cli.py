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

from tornado_stm.stm.settings import SettingError

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
        importlib.import_module(name).register(subparsers)
    # --version on the command and on every subcommand (`tornado-stm serve --version`).
    from tornado_stm.info import version_line
    version = version_line()
    for command in [parser, *subparsers.choices.values()]:
        command.add_argument("--version", action="version", version=version,
                             help="print the versions of tornado-stm, Tornado and Python")
    return parser


#: Commands whose arguments after ``--`` belong to the program they run.
COMMANDS_WITH_APP_ARGS = ("serve",)


def split_app_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """``serve app:make -- --debug`` -> (``serve app:make``, ``--debug``).

    Done before argparse, which cannot tell a trailing ``--`` list from its
    own positionals once options come between them (Python 3.11).
    """
    # The command is the first word that is not an option (the global
    # options take no value).
    command = next((word for word in argv if not word.startswith("-")), None)
    if command in COMMANDS_WITH_APP_ARGS and "--" in argv:
        at = argv.index("--")
        return argv[:at], argv[at + 1:]
    return argv, []


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    own, app_args = split_app_args(list(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(own)
    if app_args:
        args.app_args = app_args
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(name)s: %(levelname)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except SettingError as exc:         # the environment's settings, not a bug
        print(f"tornado-stm: {exc}", file=sys.stderr)
        return 2
