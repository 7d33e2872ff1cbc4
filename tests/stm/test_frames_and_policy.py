"""Generators and coroutines of application code; the policy table as data."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.stm.conftest import instrumented
from tornado_stm import stm
from tornado_stm.stm import policy


def test_a_generator_made_inside_the_section_stays_optimistic() -> None:
    frames = instrumented("frames")
    frames.SHARED["steps"] = 0
    stm.reset_stats()
    assert frames.consume_fresh(5) == 10
    assert frames.SHARED["steps"] == 5
    assert stm.stats()["inevitable"] == 0


def test_resuming_a_generator_made_outside_makes_the_section_inevitable() -> None:
    frames = instrumented("frames")
    frames.SHARED["steps"] = 0
    generator = frames.counting(3)
    stm.reset_stats()
    assert frames.consume(generator) == [0, 1, 2]
    assert frames.SHARED["steps"] == 3
    causes = stm.stats()["inevitable_by_cause"]
    assert causes == {"advancing an iterator or generator from outside the section": 1}


def test_coroutine_steps_run_in_place_outside_sections() -> None:
    frames = instrumented("frames")
    frames.SHARED["steps"] = 0
    stm.reset_stats()
    assert asyncio.run(frames.handler_step(4)) == 4
    assert frames.SHARED["steps"] == 4
    assert stm.stats()["commits"] == 0


def test_policy_specs_parse_and_bad_ones_are_one_line_errors() -> None:
    assert policy.parse("mutates 0,2").writes == (0, 2)
    assert policy.parse("pure fresh").fresh
    for bad, message in (("sometimes", "expected pure"), ("mutates", "needs the positions"),
                         ("pure 1", "only 'mutates'"), ("mutates x", "must be integers")):
        with pytest.raises(policy.PolicyError, match=message) as info:
            policy.parse(bad)
        assert "\n" not in str(info.value)


def test_policy_file_extends_the_table(tmp_path: Path) -> None:
    good = tmp_path / "policy.toml"
    good.write_text('[calls]\n"tests.stm.helpers.run_threads" = "deep"\n')
    assert policy.load_file(str(good)) == 1
    from tests.stm import helpers
    assert policy.lookup(helpers.run_threads).kind == "deep"
    bad = tmp_path / "bad.toml"
    bad.write_text('[calls]\n"x.y" = "maybe"\n')
    with pytest.raises(policy.PolicyError, match="bad.toml: 'x.y'"):
        policy.load_file(str(bad))
    with pytest.raises(policy.PolicyError, match="missing.toml"):
        policy.load_file(str(tmp_path / "missing.toml"))


def test_shipped_entries_classify_common_callables() -> None:
    import hashlib
    import heapq
    import json
    import math
    import time
    samples = {len: "pure", math.sqrt: "pure", heapq.heappush: "mutates", [].append: "mutates",
               {}.keys: "pure", "x".upper: "pure", hashlib.sha1: "pure", time.time: "special",
               json.dumps: "deep", print: "irrevocable", open: "irrevocable"}
    assert {f: policy.lookup(f).kind for f in samples} == samples


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_trailing_plus_makes_forked_children_log_too(tmp_path: Path) -> None:
    script = tmp_path / "forks.py"
    script.write_text(textwrap.dedent('''
        import os
        import transaction

        box = {"n": 0}

        def work():
            box["n"] += 1

        pid = os.fork()
        transaction.add(work)
        transaction.run()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        print(pid)
    '''))
    log = tmp_path / "fork.log"
    result = subprocess.run([sys.executable, "-W", "ignore", "-m", "tornado_stm", "exec",
                             "--threads", "1", str(script)],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYPYSTM": f"{log}+"})
    assert result.returncode == 0, result.stderr
    child = result.stdout.split()[-1]
    assert log.read_bytes().startswith(b"STMGC-C8-PROF01\n")
    assert (tmp_path / f"fork.log.fork{child}").read_bytes().startswith(b"STMGC-C8-PROF01\n")


def test_deep_reads_of_private_structures_stay_optimistic() -> None:
    effects = instrumented("effects")
    stm.reset_stats()
    assert effects.dumps_private(3) == '{"values": [0, 1, 2], "name": "private"}'
    assert stm.stats()["inevitable"] == 0
    assert effects.dumps_shared().startswith('{"shared": {')
    assert stm.stats()["inevitable_by_cause"] == {"deep read by json.dumps": 1}


def test_a_deep_read_passes_over_rows_of_numbers_and_still_finds_shared_ones() -> None:
    # 200 x 200 numbers, twice: more than DEEP_CHECK_BUDGET objects one by one
    effects = instrumented("effects")
    stm.reset_stats()
    assert json.loads(effects.dumps_private_grid(200))["grid"][199][:4] == [1, 2, 0, 1]
    assert stm.stats()["inevitable"] == 0
    assert json.loads(effects.dumps_rows_with_a_shared_one())[2] == effects.SHARED
    assert stm.stats()["inevitable_by_cause"] == {"deep read by json.dumps": 1}


def test_building_an_exception_of_an_uninstrumented_module_is_not_irrevocable() -> None:
    import tornado.web
    effects = instrumented("effects")
    stm.reset_stats()
    with pytest.raises(tornado.web.HTTPError):
        effects.raise_http_error()
    with pytest.raises(effects.AppError, match="boom"):
        effects.write_then_fail("boom")
    assert effects.build_plain()
    assert stm.stats()["inevitable"] == 0


def test_log_records_name_the_application_s_line(caplog) -> None:
    """A record logged by application code names its file, function and line,
    not the barrier that made the call (it named tornado_stm/stm/calls.py)."""
    frames = instrumented("frames")
    source = Path(frames.__file__).read_text().splitlines()
    line = next(i for i, text in enumerate(source, 1) if "# LOG_LINE" in text)
    log = __import__("logging").getLogger("tests.frames")
    with caplog.at_level("WARNING"):
        frames.log_twice(log)
        asyncio.run(frames.log_in_a_step(log))
    assert [(Path(r.pathname).name, r.funcName) for r in caplog.records] == [
        ("frames.py", "log_twice"), ("frames.py", "log_twice"), ("frames.py", "log_in_a_step")]
    assert [r.lineno for r in caplog.records] == [line, line + 1, line + 5]


def test_an_instrumented_function_shows_its_defaults() -> None:
    frames = instrumented("frames")
    assert frames.with_defaults.__defaults__ == (2,)
    assert frames.with_defaults.__kwdefaults__ == {"c": 3}
    assert frames.with_defaults(1) == 6
    assert frames.log_in_a_step.__defaults__ is None
