"""The text report of ``stmlog report``, in PyPy's print_stm_log.py layout.

Users compare it with what PyPy printed, so the totals block and the
``%.3fs lost in aborts, %.3fs paused (%dx NAME)`` lines keep their
layout. After PyPy's part come our additions: per-thread figures and the
conflicts grouped by source location. Input is the dict of
:func:`stmlog_tools.analysis.analyse`.
"""

from __future__ import annotations

#: How many conflicts PyPy printed by default (C8 analyser; the C7 one printed 15).
DEFAULT_TOP = {"c8": 5, "c7": 15}


def percent(part: float, total: float) -> str:
    """PyPy's percentage: one decimal, dropped when longer than 3 characters."""
    if total == 0:
        return "n/a"
    text = "%.1f" % (part * 100.0 / total)
    if len(text) > 3:
        text = text.split(".")[0]
    return text + "%"


def _pypy_timeline_c8(buckets: list[int]) -> str:
    # Blank for none, then _ x X for up to a third, two thirds, all of the busiest bucket.
    peak = max(buckets) + 0.1
    return "|" + "".join("_xX"[int(n / peak * 3)] if n else " " for n in buckets) + "|"


def _pypy_timeline_c7(buckets: list[int]) -> str:
    return "".join("x" if n else "." for n in buckets)


def _marker_lines(conflict: dict) -> list[str]:
    lines = []
    for marker, source in zip(conflict["markers"], conflict["sources"]):
        lines.append(f"  {marker}")
        if source:
            lines.append(f"    {source}")
    return lines


def _conflict_block(conflict: dict, fmt: str) -> list[str]:
    lines = ["%.3fs lost in aborts, %.3fs paused (%dx %s)" % (
        conflict["aborted_time"], conflict["paused_time"], conflict["count"], conflict["event"])]
    lines += _marker_lines(conflict)
    draw = _pypy_timeline_c8 if fmt == "c8" else _pypy_timeline_c7
    lines.append("time line: " + draw(conflict["timeline"]))
    lines.append("")
    return lines


def _c8_totals(report: dict) -> list[str]:
    total = report["total_real_time"]
    cpu = report["cpu_time"]
    txn = report["transactions"]
    per_second = txn["per_second"]
    return [
        "",
        "Total real time:     %9.3fs" % total,
        "CPU time in STM mode:%9.3fs (%4s) committed" % (cpu["committed"],
                                                        percent(cpu["committed"], total)),
        "                     %9.3fs (%4s) aborted" % (cpu["aborted"],
                                                      percent(cpu["aborted"], total)),
        "                     %9.3fs (%4s) paused" % (cpu["paused"], percent(cpu["paused"], total)),
        "                     %9.3fs (%4s) TOTAL" % (cpu["total"], percent(cpu["total"], total)),
        "           including %9.3fs (%4s) minor GC collections" % (
            cpu["gc_minor"], percent(cpu["gc_minor"], total)),
        "                 and %9.3fs (%4s) major GC collections" % (
            cpu["gc_major"], percent(cpu["gc_major"], total)),
        "Total number of transactions: %6.f committed: %4s aborted: %4s" % (
            txn["total"], percent(txn["committed"], txn["total"]),
            percent(txn["aborted"], txn["total"])),
        "     transactions per second: %6s" % ("n/a" if per_second is None
                                               else "%.f" % per_second),
        "",
    ]


def _c7_totals(report: dict) -> list[str]:
    total = report["total_real_time"]
    cpu = report["cpu_time"]["total"]
    return [
        "Total real time:             %.3fs" % total,
        "Total CPU time in STM mode:  %.3fs (%s)" % (cpu, percent(cpu, total)),
        "",
    ]


def _our_additions(report: dict, top: int) -> list[str]:
    lines = ["Per thread (stmlog additions):"]
    for t in report["threads"]:
        rate = t["abort_rate"]
        lines.append("  thread %-4d %7d committed %7d aborted (%s abort rate) %9.3fs CPU" % (
            t["thread"], t["committed"], t["aborted"],
            "n/a" if rate is None else percent(rate, 1.0), t["cpu_time"]["total"]))
    if report["locations"]:
        lines += ["", "Conflicts by source location:"]
        for loc in report["locations"][:top]:
            kinds = ", ".join(f"{n}x {name}" for name, n in sorted(loc["events"].items()))
            lines.append("  %.3fs lost in aborts, %.3fs paused at %s:%d (%s)" % (
                loc["aborted_time"], loc["paused_time"], loc["file"], loc["line"], kinds))
            if loc["source"]:
                lines.append(f"    {loc['source']}")
    lines.append("")
    return lines


def format_report(report: dict, top: int | None = None) -> str:
    """The text report: PyPy's totals and top conflicts, then our per-thread figures."""
    fmt = report["format"]
    if top is None:
        top = DEFAULT_TOP[fmt]
    lines = _c8_totals(report) if fmt == "c8" else _c7_totals(report)
    for conflict in report["conflicts"][:top]:
        lines += _conflict_block(conflict, fmt)
    lines += _our_additions(report, top)
    return "\n".join(lines)
