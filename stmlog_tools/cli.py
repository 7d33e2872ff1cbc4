"""The ``stmlog`` command: ``report``, ``dump`` and ``timeline`` on PYPYSTM logs.

Run as ``stmlog ...`` or ``python -m stmlog_tools ...``. A log that cannot
be read gives one line on stderr (file, byte offset, problem) and exit
status 2; a truncated last record gives a warning and the rest is used.
Long runs show progress on stderr when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence

from stmlog_tools import __version__
from stmlog_tools.format import C8_NUMBERINGS
from stmlog_tools.logfile import LogError, LogInput, ProgressCallback, open_log

log = logging.getLogger("stmlog")

EXIT_BAD_INPUT = 2


class Progress:
    """Percent of the file read, on one line of stderr, at most twice a second."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.5 and done < total:
            return
        self.last = now
        self.shown = True
        sys.stderr.write(f"\r{self.label}: {100.0 * done / max(total, 1):5.1f}%")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            self.shown = False   # close() runs from an error path and from finally


def _progress(args: argparse.Namespace) -> Progress | None:
    if args.no_progress or not sys.stderr.isatty():
        return None
    return Progress(f"reading {args.file}")


def cmd_report(args: argparse.Namespace, source: LogInput,
               progress: ProgressCallback | None) -> int:
    from stmlog_tools.analysis import analyse
    from stmlog_tools.report import format_report
    report = analyse(source, events=args.events, progress=progress, engine=args.engine)
    if args.json:
        if args.top is not None:
            report["conflicts"] = report["conflicts"][:args.top]
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_report(report, args.top))
        sys.stdout.write("\n")
    return 0


def cmd_dump(args: argparse.Namespace, source: LogInput,
             progress: ProgressCallback | None) -> int:
    from stmlog_tools.guess import resolve_numbering
    from stmlog_tools.reader import LogReader
    reader = LogReader(source, events=resolve_numbering(source, args.events), progress=progress)
    out = sys.stdout
    c7 = reader.format == "c7"
    for event in reader.events():
        thread = f"{event.thread}->{event.other_thread}" if c7 else str(event.thread)
        line = f"{event.offset:>10}  {event.time:.9f}  [{thread}]  {event.name}"
        if event.marker:
            line += "  " + event.marker.decode("utf-8", "backslashreplace")
        if event.marker2:
            line += "  |  " + event.marker2.decode("utf-8", "backslashreplace")
        out.write(line + "\n")
    return 0


def cmd_timeline(args: argparse.Namespace, source: LogInput,
                 progress: ProgressCallback | None) -> int:
    from stmlog_tools.guess import resolve_numbering
    from stmlog_tools.timeline import write_timeline
    if not args.output.lower().endswith((".html", ".htm", ".svg")):
        print(f"stmlog: {args.output}: the output must end in .html or .svg", file=sys.stderr)
        return EXIT_BAD_INPUT
    lanes = write_timeline(source, args.output, events=resolve_numbering(source, args.events),
                           columns=args.width, progress=progress)
    log.info("wrote %s (%d lanes)", args.output, lanes)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stmlog", description="Read, analyse and draw PYPYSTM logs (PyPy-STM's C7/C8 "
                                   "and tornado-stm's).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("file", help="the PYPYSTM log file")
    common.add_argument("--events", choices=(*C8_NUMBERINGS, "auto"), default="final",
                        help="C8 event numbering: final (Nov 2015 on, default), 2015-06, "
                             "2015-03, or auto to guess (see docs/stmlog.md)")
    common.add_argument("--no-progress", action="store_true",
                        help="no progress on stderr even when it is a terminal")
    common.add_argument("-v", "--verbose", action="store_true", help="log more on stderr")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    report = sub.add_parser("report", parents=[common], help="totals and top conflicts "
                                                              "(PyPy's layout) or --json")
    report.add_argument("--top", type=int, default=None, metavar="N",
                        help="conflicts to print (default 5 for C8, 15 for C7; with --json "
                             "all unless given)")
    report.add_argument("--json", action="store_true", help="print the report as one JSON "
                                                             "object (schema: docs/stmlog.md)")
    report.add_argument("--engine", choices=("auto", "c", "numpy"), default="auto",
                        help="C8 analysis pass: the C accelerator when built (auto), or "
                             "force c or numpy (the two give the same figures)")
    report.set_defaults(run=cmd_report)
    dump = sub.add_parser("dump", parents=[common], help="one event a line")
    dump.set_defaults(run=cmd_dump)
    timeline = sub.add_parser("timeline", parents=[common],
                              help="draw one lane per thread into an .html or .svg file")
    timeline.add_argument("-o", "--output", required=True, help="out.html or out.svg")
    timeline.add_argument("--width", type=int, default=1000,
                          help="columns (pixels) of the time axis (default 1000)")
    timeline.set_defaults(run=cmd_timeline)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="stmlog: %(levelname)s: %(message)s")
    if getattr(args, "top", None) is not None and args.top < 0:
        print("stmlog: --top must be 0 or more", file=sys.stderr)
        return EXIT_BAD_INPUT
    progress = _progress(args)
    try:
        with open_log(args.file) as source:   # the header is checked here, once
            return args.run(args, source, progress)
    except LogError as exc:
        if progress is not None:
            progress.close()
        print(f"stmlog: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:   # `stmlog dump ... | head`: the reader has had enough
        # Point stdout at /dev/null so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:   # writing the output: a full disk, a missing directory...
        print(f"stmlog: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RuntimeError as exc:   # --engine c without the accelerator built
        print(f"stmlog: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        if progress is not None:
            progress.close()


if __name__ == "__main__":
    sys.exit(main())
