"""The benchmark's own machinery against real servers: load generators, a short run.

Only what the bench reports is checked (rows, statuses, files), never how
fast anything was: timings belong to the benchmark, not to pass/fail tests.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

from bench import loadgen
from bench.configs import all_configs
from testsupport.serverproc import free_port, start_server

needs = pytest.mark.skipif(not (shutil.which("siege") and shutil.which("wrk")),
                           reason="siege and wrk come from scripts/install-system-deps")


@pytest.fixture(scope="module")
def primes_server(tmp_path_factory):
    port = free_port()
    server = start_server([sys.executable, "-m", "apps.primes", "--port", str(port)], port,
                          str(tmp_path_factory.mktemp("primes") / "server.log"))
    yield server
    server.stop()


@needs
def test_siege_counts_requests_and_latencies(primes_server) -> None:
    # 3 s, not 1: in a CI run on a loaded machine siege's timer once ran out
    # before either client's first request (0 transactions, 0 failures,
    # "Elapsed time: 0.00"); the window is the tool's, the checks are unchanged.
    load = loadgen.run_siege(primes_server.url + "/primes/100", concurrency=2, seconds=3)
    assert load.tool == "siege" and load.failures == 0 and load.requests > 0
    assert load.requests_per_second > 0 and load.p50_ms is not None
    assert load.p50_ms <= load.p99_ms


@needs
def test_wrk_counts_requests_and_latencies(primes_server) -> None:
    load = loadgen.run_wrk(primes_server.url + "/", connections=4, seconds=1, threads=1)
    assert load.tool == "wrk" and load.failures == 0 and load.requests > 0
    assert 0 < load.p50_ms <= load.p99_ms


@needs
def test_wrk_counts_error_answers_as_failures(primes_server) -> None:
    load = loadgen.run_wrk(primes_server.url + "/primes/abc", connections=2, seconds=1,
                           threads=1)
    assert load.requests > 0 and load.failures == load.requests


def test_parsers_reject_output_they_do_not_understand() -> None:
    with pytest.raises(loadgen.LoadFailed, match="siege printed no"):
        loadgen.parse_siege("", "siege: command not understood")
    with pytest.raises(loadgen.LoadFailed, match="wrk printed no totals"):
        loadgen.parse_wrk("unable to connect to 127.0.0.1:1 Connection refused")


@needs
def test_a_short_bench_run_writes_json_and_a_table(tmp_path) -> None:
    from bench import run

    status = run.main(["--only", "hello", "--hello-seconds", "1", "--warmup-seconds", "0.2",
                       "--out", str(tmp_path)])
    results = json.loads((tmp_path / "results.json").read_text())
    rows = {r["key"]: r for r in results["rows"]}
    assert status == (1 if any(r["status"] == "failed" for r in rows.values()) else 0)
    assert set(rows) == {c.key for c in all_configs(os.cpu_count()) if c.workload == "hello"}
    for row in rows.values():
        # Every row either has numbers or says why it has none.
        assert row["status"] in ("ok", "not available", "failed")
        if row["status"] == "ok":
            assert row["requests"] > 0 and row["requests_per_second"] > 0
        else:
            assert row["reason"]
    ok_stock = [r for r in rows.values() if r["key"] == "stock-gil" and r["status"] == "ok"]
    if ok_stock:
        assert ok_stock[0]["ratio_to_stock_gil"] == 1.0
    table = (tmp_path / "results.md").read_text()
    assert "| configuration | req/s |" in table and "Hello world" in table
    # matplotlib comes with the bench extra, which the test venvs install (Makefile).
    assert (tmp_path / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_stm_stats_reads_aborts_and_inevitable_transitions(tmp_path) -> None:
    from stmlog_tools.writer import LogWriter

    from bench.stmstats import stm_stats

    path = str(tmp_path / "run.pypystm")
    marker = b'File "apps/astar_game.py", line 150, in move'
    with LogWriter(path) as log:
        t = 1.0
        for thread, outcome in [(1, "STM_TRANSACTION_COMMIT"), (2, "STM_TRANSACTION_ABORT"),
                                (2, "STM_TRANSACTION_COMMIT"), (1, "STM_TRANSACTION_COMMIT")]:
            log.write("STM_TRANSACTION_START", thread, timestamp=t)
            if outcome.endswith("ABORT"):
                log.write("STM_CONTENTION_WRITE_READ", thread, marker=marker, timestamp=t + 0.1)
            else:
                log.write("STM_BECOME_INEVITABLE", thread, marker=b"self.write",
                          timestamp=t + 0.1)
            log.write(outcome, thread, timestamp=t + 0.2)
            t += 1
    stats = stm_stats(path)
    assert (stats["commits"], stats["aborts"], stats["inevitable"]) == (3, 1, 3)
    assert stats["note"] is None
    assert "CONTENTION_WRITE_READ" in stats["top_conflict"] and "line 150" in stats["top_conflict"]


def test_stm_stats_says_why_it_has_no_numbers(tmp_path) -> None:
    from bench.stmstats import stm_stats

    assert stm_stats(str(tmp_path / "missing.pypystm"))["note"] == \
        "the server wrote no PYPYSTM log"


def test_rounds_report_the_median_and_never_hide_a_bad_round() -> None:
    from bench.run import median_row

    rounds = [{"status": "ok", "requests_per_second": v} for v in (5.0, 1.0, 3.0)]
    row = median_row(rounds)
    assert row["requests_per_second"] == 3.0
    assert row["rounds_requests_per_second"] == [5.0, 1.0, 3.0]
    rounds[1] = {"status": "violations", "requests_per_second": 9.0, "violations": 2}
    assert median_row(rounds)["status"] == "violations"


def test_tornado_stm_rows_come_once_per_variant_of_serve_arguments() -> None:
    from bench.configs import WORKLOADS, variant_slug

    plain = all_configs(2)
    loops = [["--loop", "shared"], ["--loop", "per-thread"]]
    both = all_configs(2, loops)
    assert {c.workload for c in plain} == set(WORKLOADS)
    stm_plain = [c for c in plain if c.family == "stm"]
    stm_both = [c for c in both if c.family == "stm"]
    # By default: the loop per thread at 1..cores threads, the shared loop at
    # every core, the shared loop without pipelining for the stateless rows.
    shared = [c for c in stm_plain if "--loop shared" in c.label]
    nopipe = [c for c in stm_plain if "pipelining off" in c.label]
    per_thread = [c for c in stm_plain if c not in shared and c not in nopipe]
    assert len(shared) == len(WORKLOADS) and all(c.key.startswith("stm-2") for c in shared)
    # Explicit variants replace that: each row once per variant, except that
    # --no-pipelining goes with the shared loop only.
    assert len(stm_both) == 2 * len(per_thread) + len(nopipe)
    assert all("shared" in c.key for c in stm_both if "nopipe" in c.key)
    assert [c for c in both if c.family != "stm"] == [c for c in plain if c.family != "stm"]
    keys = [(c.workload, c.key) for c in both]
    assert len(keys) == len(set(keys))  # every row still has its own key
    assert variant_slug(["--loop", "per-thread"]) == "loop-per-thread"
    for config in stm_both:
        if config.argv is None:
            continue  # tornado-stm not runnable here: the row says why
        args = next(a for a in loops if variant_slug(a) in config.key)
        command = config.command(8888)
        assert command[-len(args):] == args or command[-len(args) - 1:-1] == args
        assert " ".join(args) in config.label
    # The game's workloads have no forked-process peer, the stateless ones do.
    peers = {c.workload: c for c in plain if c.family == "processes"}
    assert peers["astar"].unavailable and peers["astar2014"].unavailable
    assert not peers["async"].unavailable or "venv" in peers["async"].unavailable


def test_run_accepts_the_new_workloads_and_serve_arguments(monkeypatch, tmp_path) -> None:
    from bench import run

    seen = {}

    def no_run(config, settings, out_dir, progress):
        seen.setdefault(config.workload, []).append(config.key)
        return {"workload": config.workload, "key": config.key, "label": config.label,
                "family": config.family, "interpreter": config.interpreter,
                "status": "not available", "reason": "not run by this test"}

    monkeypatch.setattr(run, "run_config", no_run)
    monkeypatch.setattr(run.report, "plot", lambda results, path: None)
    status = run.main(["--only", "astar2014", "async", "--stm-serve-args=--loop per-thread",
                       "--out", str(tmp_path)])
    assert status == 0 and set(seen) == {"astar2014", "async"}
    assert "stm-2-loop-per-thread" in seen["async"]
    loads = json.loads((tmp_path / "results.json").read_text())["loads"]
    assert "--mix search" in loads["astar2014"] and "/work" in loads["async"]
