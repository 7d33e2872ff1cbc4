"""What a PYPYSTM log of a tornado-stm run says: commits, aborts, inevitable transitions.

Aborts, commits and the top conflict come from ``stmlog report FILE --json``
(stmlog_tools' analyser, PyPy's arithmetic); inevitable transitions are the
log's BECOME_INEVITABLE events, counted with stmlog_tools' reader (the report
charges only the waits they cause). Whatever is missing (no log written, a
tool not in this checkout) is said in ``note`` instead of a number.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any


def stm_stats(log_path: str, python: str = sys.executable) -> dict[str, Any]:
    stats: dict[str, Any] = {"commits": None, "aborts": None, "inevitable": None,
                             "top_conflict": None, "note": None}
    if not os.path.exists(log_path) or os.path.getsize(log_path) == 0:
        stats["note"] = "the server wrote no PYPYSTM log"
        return stats
    stats["log_bytes"] = os.path.getsize(log_path)
    notes = []
    report = stmlog_report(log_path, python)
    if isinstance(report, str) and "empty log" in report:
        stats["note"] = "the PYPYSTM log holds no events"
        return stats
    if isinstance(report, str):
        notes.append(report)
    else:
        transactions = report.get("transactions", {})
        stats["commits"] = transactions.get("committed")
        stats["aborts"] = transactions.get("aborted")
        conflicts = report.get("conflicts") or []
        if conflicts:
            top = conflicts[0]
            stats["top_conflict"] = (f"{top.get('count')}x {top.get('event')} at "
                                     f"{'; '.join(top.get('markers') or ['?'])}")
    try:
        stats["inevitable"] = count_events(log_path, "BECOME_INEVITABLE")
    except Exception as exc:  # an unreadable log is a finding, not a crash
        notes.append(f"counting events failed: {exc}")
    stats["note"] = "; ".join(notes).replace(os.getcwd() + os.sep, "") or None
    return stats


def stmlog_report(log_path: str, python: str) -> dict | str:
    """The report as a dict, or the one-line reason there is none."""
    done = subprocess.run([python, "-m", "stmlog_tools", "report", log_path, "--json"],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return "stmlog report failed: " + (lines[-1] if lines else f"exit {done.returncode}")
    try:
        return json.loads(done.stdout)
    except ValueError:
        return "stmlog report printed no JSON"


def count_events(log_path: str, name: str) -> int:
    import numpy as np

    from stmlog_tools.format import C7_EVENTS, C8_FINAL
    from stmlog_tools.reader import LogReader

    reader = LogReader(log_path)
    total = 0
    number = None
    for chunk in reader.chunks():
        if number is None:
            table = C8_FINAL if reader.format == "c8" else C7_EVENTS
            number = table.number(name)
        total += int(np.count_nonzero(chunk.event == number))
    return total
