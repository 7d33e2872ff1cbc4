"""Shared helpers of the stmlog_tools tests: build logs with the writer, run the CLI."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from stmlog_tools.writer import LogWriter

#: A record as tests write it: (sec, nsec), thread, event name, marker.
Record = tuple[tuple[int, int], int, str, bytes]


def ms(milliseconds: int, base_sec: int = 1000) -> tuple[int, int]:
    """An exact (sec, nsec) timestamp ``milliseconds`` after ``base_sec``."""
    sec, msec = divmod(milliseconds, 1000)
    return base_sec + sec, msec * 1_000_000


def write_c8(path: Path, records: Iterable[Record], events: str = "final") -> Path:
    """A C8 log at ``path`` holding ``records`` (names translated to ``events``)."""
    with LogWriter(path, fmt="c8", events=events) as writer:
        for timestamp, thread, name, marker in records:
            writer.write(name, thread, marker, timestamp=timestamp)
    return path


def write_c7(path: Path, records: Iterable[tuple[tuple[int, int], int, int, str, bytes, bytes]]
             ) -> Path:
    """A C7 log: records are (timestamp, thread, other_thread, name, marker1, marker2)."""
    with LogWriter(path, fmt="c7") as writer:
        for timestamp, thread, other, name, m1, m2 in records:
            writer.write(name, thread, m1, timestamp=timestamp, marker2=m2,
                         other_thread_num=other)
    return path


def run_stmlog(*args: str, module: bool = False) -> subprocess.CompletedProcess[str]:
    """Run the real ``stmlog`` command (or ``python -m stmlog_tools``) in a subprocess."""
    if module:
        command = [sys.executable, "-m", "stmlog_tools", *args]
    else:
        command = [str(Path(sys.executable).with_name("stmlog")), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "run.log"


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Exit status 2, nothing on stdout, one line on stderr holding every fragment."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def c_accelerator_built() -> bool:
    from stmlog_tools import analysis
    return analysis._fastc8 is not None


#: The C8 analysis passes to test: both must give the same figures.
ENGINES = [pytest.param("numpy"),
           pytest.param("c", marks=pytest.mark.skipif(not c_accelerator_built(),
                                                      reason="stmlog_tools._fastc8 not built"))]


def same_report(a: object, b: object) -> bool:
    """Equal structures, floats equal to 1e-12 (the passes add in different orders)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            same_report(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same_report, a, b))
    if isinstance(a, float):
        return isinstance(b, (int, float)) and abs(a - b) <= 1e-12
    return a == b
