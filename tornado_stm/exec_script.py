"""``tornado-stm exec script.py [args]``: run a PyPy-STM style script on our STM.

As ``pypy-stm script.py`` did: ``import transaction`` and ``import
pypystm`` give :mod:`tornado_stm.transaction` and :mod:`tornado_stm.pypystm`;
the script and the modules next to it (its own package) are instrumented,
so every call added with ``transaction.add`` runs as one atomic section.
``PYPYSTM=<file>`` or ``--log FILE`` writes the log, as with PyPy-STM,
but never over an existing non-empty file unless ``--force``: the log
then goes to the first free numbered name, and a line on stderr says where.
"""


from __future__ import annotations

import argparse
import builtins
import logging
import os
import sys
import traceback
from types import ModuleType

from tornado_stm import instrument, pypystm, stm, transaction
from tornado_stm.stm import flush_log
from tornado_stm.stm.log import LogPathError, configure
from tornado_stm.stm.section import module_body

logger = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "exec", help="run a script written for PyPy-STM's transaction module",
        description="Run SCRIPT with 'import transaction' and 'import pypystm' resolving to "
                    "tornado-stm, the script and its directory's modules instrumented.")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments given to the script")
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="threads for transaction.run() (default: the number of CPUs)")
    parser.add_argument("--backend", choices=transaction.BACKENDS, default=None,
                        help="stm (default), serial (reference run) or pypystm (on PyPy-STM)")
    parser.add_argument("--log", metavar="FILE", default=None,
                        help="write a PYPYSTM log to FILE (default: $PYPYSTM). An existing "
                        "non-empty FILE is kept and the log goes to its first free "
                        "numbered name (run.log -> run.1.log) unless --force")
    parser.add_argument("--force", action="store_true",
                        help="let --log (or $PYPYSTM) overwrite an existing file")
    parser.set_defaults(func=run)


def local_module_patterns(directory: str) -> list[str]:
    """Patterns naming the modules and packages that live in ``directory``."""
    patterns: list[str] = []
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        if entry.endswith(".py") and os.path.isfile(path):
            patterns.append(entry[:-3])
        elif os.path.isfile(os.path.join(path, "__init__.py")):
            patterns.extend(instrument.package_patterns(entry))
    return patterns


def run(args: argparse.Namespace) -> int:
    script = os.path.abspath(args.script)
    try:
        with open(script, "rb") as stream:
            source = stream.read()
    except OSError as exc:
        print(f"tornado-stm exec: cannot read {args.script}: {exc.strerror}", file=sys.stderr)
        return 2
    if args.threads is not None:
        if args.threads < 1:
            print(f"tornado-stm exec: --threads {args.threads}: needs at least 1", file=sys.stderr)
            return 2
        transaction.set_num_threads(args.threads)
    if args.backend:
        try:
            transaction.set_backend(args.backend)
        except transaction.TransactionError as exc:
            print(f"tornado-stm exec: {exc}", file=sys.stderr)
            return 2
    if args.log:
        os.environ["PYPYSTM"] = args.log  # also for the script's child processes
    try:
        where = configure(args.log, force=args.force)
    except LogPathError as exc:
        print(f"tornado-stm exec: {exc}", file=sys.stderr)
        return 2
    if where is not None:
        requested, written = where
        if written != requested:
            print(f"tornado-stm exec: PYPYSTM log {requested} exists and is not empty: "
                  f"writing the log to {written} (--force overwrites)", file=sys.stderr)
        else:
            print(f"tornado-stm exec: writing the PYPYSTM log to {written}", file=sys.stderr)
    stm.start()
    try:
        code = instrument.compile_instrumented(source, script)
    except SyntaxError as exc:
        print(f"tornado-stm exec: {args.script}, line {exc.lineno}: {exc.msg}", file=sys.stderr)
        return 2
    directory = os.path.dirname(script)
    sys.modules["transaction"] = transaction
    sys.modules["pypystm"] = pypystm
    instrument.install(local_module_patterns(directory))
    sys.path.insert(0, directory)
    sys.argv = [script, *args.args]
    main = ModuleType("__main__")
    main.__file__ = script
    main.__builtins__ = builtins
    instrument.prepare_module(main)
    sys.modules["__main__"] = main
    try:
        with module_body():              # the script's top level is not a section
            exec(code, main.__dict__)
    except SystemExit as exc:
        # As Python does: None is 0, an int is the status, anything else is
        # printed to stderr and the status is 1.
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        sys.stdout.flush()
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # Ctrl-C: the traceback Python shows, and the status a shell reports.
        exc_type, exc, tb = sys.exc_info()
        traceback.print_exception(exc_type, exc, tb.tb_next if tb else tb)
        return 130
    except BaseException:
        # The script's own error: shown as Python shows it, minus our frames.
        exc_type, exc, tb = sys.exc_info()
        traceback.print_exception(exc_type, exc, tb.tb_next if tb else tb)
        return 1
    finally:
        flush_log()
    return 0
