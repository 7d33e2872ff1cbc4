"""The fault-injection switch: it really injects, and the engine stays exact under it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tornado_stm.stm import faults

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("spec,message", [
    ("abort=x", "'abort=x' needs a number"),
    ("boom=1", "unknown setting 'boom'"),
    ("abort=1.5", "abort must be in [0, 1)"),
])
def test_a_bad_spec_is_a_one_line_error(spec: str, message: str) -> None:
    with pytest.raises(faults.FaultSpecError, match=message.replace("[", r"\[").replace(
            "(", r"\(").replace(")", r"\)")):
        faults.configure(spec)
    faults.configure(os.environ.get("TORNADO_STM_FAULTS", ""))


def test_injected_aborts_and_delays_happen_and_counters_stay_exact() -> None:
    code = textwrap.dedent("""
        from tests.stm.conftest import instrumented
        from tests.stm.helpers import run_threads
        from tornado_stm import stm
        app = instrumented("counters")
        app.reset()
        run_threads(4, lambda index: [app.bump_all() for _ in range(200)])
        causes = stm.stats()["aborts_by_cause"]
        injected = sum(n for cause, n in causes.items() if cause.startswith("injected fault"))
        print(injected, sorted(set(app.totals().values())))
    """)
    env = {**os.environ, "TORNADO_STM_FAULTS": "abort=0.05,delay=0.0001,seed=1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    injected, totals = done.stdout.split(maxsplit=1)
    assert int(injected) > 0
    assert totals.strip() == "[800]"
