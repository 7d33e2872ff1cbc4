"""The ``stmlog`` command: ``report``, ``dump``, ``timeline`` and ``trace`` on PYPYSTM logs.

Run as ``stmlog ...`` or ``python -m stmlog_tools ...``. Every argument is
checked before the log is read: a bad one gives one line,
``stmlog COMMAND: error: argument NAME: problem``, and exit status 2 (the
argparse convention, without the usage block). A log that cannot be read
gives one line on stderr (file, byte offset, problem) and exit status 2;
a truncated last record gives a warning and the rest is used. ``FILE`` may
be ``-`` (stdin) or a pipe/FIFO, read as a stream. Ctrl-C exits 130 with
one line. Long runs show progress on stderr when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import NoReturn

from stmlog_tools import __version__
from stmlog_tools.format import C8_NUMBERINGS
from stmlog_tools.guess import resolve_numbering
from stmlog_tools.logfile import (
    DEFAULT_FIFO_WAIT, LogError, LogInput, ProgressCallback, open_log,
)

log = logging.getLogger("stmlog")

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

#: Largest ``--width`` (columns of the timeline): its arrays and SVG stay a few MB per lane.
MAX_WIDTH = 20000
#: Largest ``--wait`` (seconds): a day.
MAX_WAIT = 86400.0


class Progress:
    """Percent of the file read (bytes for a stream), on one line of stderr, twice a second."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.5 and (total <= 0 or done < total):
            return
        self.last = now
        self.shown = True
        if total > 0:
            sys.stderr.write(f"\r{self.label}: {100.0 * done / total:5.1f}%")
        else:
            sys.stderr.write(f"\r{self.label}: {done / 1048576:.1f} MiB")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            self.shown = False   # close() runs from an error path and from finally


def _progress(args: argparse.Namespace) -> Progress | None:
    if args.no_progress or not sys.stderr.isatty():
        return None
    return Progress(f"reading {args.file}")


# Argument types: each raises ArgumentTypeError with the problem; argparse names the argument.

def _count(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {value}")
        return value
    parse.__name__ = "count"
    return parse


_DURATION = re.compile(r"\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|µs|ns)?\s*")
_UNIT_SECONDS = {None: 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def _duration(text: str) -> float:
    """Seconds, ``0.25``, ``250ms``, ``40us`` or ``900ns``: 0 or more, finite."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"expected a time such as 1.5, 1.5s, 250ms, 40us or 900ns, got {text!r}")
    value = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite time, got {text!r}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


def _wait(text: str) -> float:
    value = _duration(text)
    if value > MAX_WAIT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_WAIT:g} s, got {text!r}")
    return value


def _output(suffixes: tuple[str, ...], dash: bool = False) -> Callable[[str], str]:
    """An output path ending in one of ``suffixes`` (or ``-`` when ``dash``), in an
    existing directory."""
    def parse(text: str) -> str:
        if dash and text == "-":
            return text
        if not text.lower().endswith(suffixes):
            choices = ", ".join(suffixes[:-1]) + " or " + suffixes[-1] if len(suffixes) > 1 \
                else suffixes[0]
            raise argparse.ArgumentTypeError(
                f"{text!r} must end in {choices}" + (" (or be -)" if dash else ""))
        if os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"{text!r} is a directory")
        folder = os.path.dirname(text) or "."
        if not os.path.isdir(folder):
            raise argparse.ArgumentTypeError(f"directory {folder!r} does not exist")
        if not os.access(folder, os.W_OK):
            raise argparse.ArgumentTypeError(f"directory {folder!r} is not writable")
        return text
    parse.__name__ = "output"
    return parse


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``PROG: error: MESSAGE (see PROG --help)``, status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def cmd_report(args: argparse.Namespace, source: LogInput, numbering: str,
               progress: ProgressCallback | None) -> int:
    from stmlog_tools.analysis import analyse
    from stmlog_tools.report import format_report
    report = analyse(source, events=numbering, progress=progress, engine=args.engine)
    if args.json:
        if args.top is not None:
            report["conflicts"] = report["conflicts"][:args.top]
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_report(report, args.top))
        sys.stdout.write("\n")
    return 0


def cmd_dump(args: argparse.Namespace, source: LogInput, numbering: str,
             progress: ProgressCallback | None) -> int:
    from stmlog_tools.reader import LogReader
    reader = LogReader(source, events=numbering, progress=progress)
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


def cmd_timeline(args: argparse.Namespace, source: LogInput, numbering: str,
                 progress: ProgressCallback | None) -> int:
    from stmlog_tools.timeline import write_timeline
    try:
        lanes = write_timeline(source, args.output, events=numbering,
                               columns=args.width, progress=progress, crop=args.crop,
                               begin=args.begin, end=args.end)
    except ValueError as exc:   # --from beyond the log: known only once it is read
        print(f"stmlog timeline: error: argument --from: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    log.info("wrote %s (%d lanes)", args.output, lanes)
    return 0


def cmd_trace(args: argparse.Namespace, source: LogInput, numbering: str,
              progress: ProgressCallback | None) -> int:
    from stmlog_tools.timeline import write_trace
    if args.output == "-":
        count = write_trace(source, sys.stdout, events=numbering, progress=progress)
    else:   # written aside, then renamed: a damaged log leaves no half-written file
        partial = args.output + ".part"
        try:
            with open(partial, "w", encoding="utf-8") as out:
                count = write_trace(source, out, events=numbering, progress=progress)
            os.replace(partial, args.output)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
    log.info("wrote %s (%d trace events)", args.output, count)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="stmlog", description="Read, analyse and draw PYPYSTM logs (PyPy-STM's C7/C8 "
                                   "and tornado-stm's).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    common = Parser(add_help=False)
    common.add_argument("file", metavar="FILE",
                        help="the PYPYSTM log: a file, a pipe or FIFO, or - for stdin")
    common.add_argument("--events", choices=(*C8_NUMBERINGS, "auto"), default="final",
                        help="C8 event numbering: final (Nov 2015 on, default), 2015-06, "
                             "2015-03, or auto to guess (see docs/stmlog.md)")
    common.add_argument("--wait", type=_wait, default=DEFAULT_FIFO_WAIT, metavar="TIME",
                        help="when FILE is a FIFO, how long to wait for a writer to open it "
                             f"(default {DEFAULT_FIFO_WAIT:g}s)")
    common.add_argument("--no-progress", action="store_true",
                        help="no progress on stderr even when it is a terminal")
    common.add_argument("-v", "--verbose", action="store_true", help="log more on stderr")
    common.add_argument("--version", action="version", version=f"stmlog {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    report = sub.add_parser("report", parents=[common], help="totals and top conflicts "
                                                              "(PyPy's layout) or --json")
    report.add_argument("--top", type=_count(0, 10**9), default=None, metavar="N",
                        help="conflicts to print (default 5 for C8, 15 for C7; with --json "
                             "all unless given)")
    report.add_argument("--json", action="store_true", help="print the report as one JSON "
                                                             "object (schema: docs/stmlog.md)")
    report.add_argument("--engine", choices=("auto", "c", "numpy"), default="auto",
                        help="C8 analysis pass: the C accelerator when built (auto), or "
                             "force c or numpy (the two give the same figures)")
    report.set_defaults(run=cmd_report, parser=report)
    dump = sub.add_parser("dump", parents=[common], help="one event a line")
    dump.set_defaults(run=cmd_dump, parser=dump)
    timeline = sub.add_parser("timeline", parents=[common],
                              help="draw one lane per thread into an .html or .svg file")
    timeline.add_argument("-o", "--output", required=True, type=_output((".html", ".htm", ".svg")),
                          help="out.html (with drag-to-zoom) or out.svg")
    timeline.add_argument("--width", type=_count(1, MAX_WIDTH), default=1000, metavar="COLUMNS",
                          help=f"columns (pixels) of the time axis, 1 to {MAX_WIDTH} "
                               f"(default 1000)")
    timeline.add_argument("--from", dest="begin", type=_duration, default=None, metavar="TIME",
                          help="start of the window, after the log's first event "
                               "(1.5, 1.5s, 250ms, 40us, 900ns)")
    timeline.add_argument("--to", dest="end", type=_duration, default=None, metavar="TIME",
                          help="end of the window, after the log's first event")
    timeline.add_argument("--no-crop", dest="crop", action="store_false",
                          help="keep idle time at both ends (by default the picture runs from "
                               "the first transaction start to the last transaction end)")
    timeline.set_defaults(run=cmd_timeline, parser=timeline)
    trace = sub.add_parser("trace", parents=[common],
                           help="write Chrome trace-event JSON (Perfetto, chrome://tracing)")
    trace.add_argument("-o", "--output", default="-", type=_output((".json",), dash=True),
                       help="out.json, or - for stdout (the default)")
    trace.set_defaults(run=cmd_trace, parser=trace)
    return parser


def _check(args: argparse.Namespace) -> None:
    """Checks that involve more than one argument (``error`` exits)."""
    if getattr(args, "begin", None) is not None and args.end is not None \
            and args.end <= args.begin:
        args.parser.error(f"argument --to: must be after --from "
                          f"({args.end:g}s is not after {args.begin:g}s)")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _check(args)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="stmlog: %(levelname)s: %(message)s")
    progress = _progress(args)
    try:
        with open_log(args.file, wait=args.wait) as source:   # the header is checked here, once
            # --events becomes a concrete numbering here, once (guessed for auto).
            return args.run(args, source, resolve_numbering(source, args.events), progress)
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
    except KeyboardInterrupt:
        if progress is not None:
            progress.close()
        print("stmlog: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if progress is not None:
            progress.close()


if __name__ == "__main__":
    sys.exit(main())
