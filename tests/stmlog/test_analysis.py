"""Every JSON figure of the analysis against values computed by hand, C8 and C7.

The C8 scenario (times in ms after 1000 s; threads 1, 2, 3):

* thread 1: START 0, BECOME_INEVITABLE 100, COMMIT 300
  -> 300 ms committed; its inevitable event is never waited for: no conflict.
* thread 2: START 50, BECOME_INEVITABLE(M2) 150, WAIT_OTHER_INEVITABLE 200,
  WAIT_DONE 350, COMMIT 400 -> 150 + 50 = 200 ms committed, 150 ms paused;
  150 ms paused charged to (BECOME_INEVITABLE, M2).
* thread 3: START 10, CONTENTION_WRITE_READ(W) 250, again 260 (ignored),
  ABORT 270 -> 260 ms aborted; 240 ms charged to (WRITE_READ, W).
  WAIT_FREE_SEGMENT 280 .. WAIT_DONE 320 (back to stop: not counted),
  START 330, GC minor 380..390, GC major 470..490, WAIT_SYNC_PAUSE 540 ..
  WAIT_DONE 560, COMMIT 600 -> 210 + 40 = 250 ms committed, 20 ms paused,
  10 ms minor GC, 20 ms major GC.
Totals: committed 750, aborted 260, paused 170, total 1180 ms; real time
600 ms; 3 commits, 1 abort.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stmlog_tools.analysis import analyse
from stmlog_tools.report import percent
from stmlog_tools.format import C8_FINAL, C8_TABLES
from stmlog_tools.logfile import LogError
from tests.stmlog.conftest import ENGINES, c_accelerator_built, ms, same_report, write_c7, write_c8

M1 = b'File "/srv/app/handlers.py", line 10, in get'
M2 = b'File "/srv/app/handlers.py", line 22, in post'
W = b'File "/srv/app/model.py", line 5, in bump'

CORE = [
    (ms(0), 1, "TRANSACTION_START", b""),
    (ms(10), 3, "TRANSACTION_START", b""),
    (ms(50), 2, "TRANSACTION_START", b""),
    (ms(100), 1, "BECOME_INEVITABLE", M1),
    (ms(150), 2, "BECOME_INEVITABLE", M2),
    (ms(200), 2, "WAIT_OTHER_INEVITABLE", b""),
    (ms(250), 3, "CONTENTION_WRITE_READ", W),
    (ms(260), 3, "CONTENTION_WRITE_READ", W),
    (ms(270), 3, "TRANSACTION_ABORT", b""),
    (ms(280), 3, "WAIT_FREE_SEGMENT", b""),
    (ms(300), 1, "TRANSACTION_COMMIT", b""),
    (ms(320), 3, "WAIT_DONE", b""),
    (ms(330), 3, "TRANSACTION_START", b""),
    (ms(350), 2, "WAIT_DONE", b""),
    (ms(380), 3, "GC_MINOR_START", b""),
    (ms(390), 3, "GC_MINOR_DONE", b""),
    (ms(400), 2, "TRANSACTION_COMMIT", b""),
    (ms(470), 3, "GC_MAJOR_START", b""),
    (ms(490), 3, "GC_MAJOR_DONE", b""),
    (ms(540), 3, "WAIT_SYNC_PAUSE", b""),
    (ms(560), 3, "WAIT_DONE", b""),
    (ms(600), 3, "TRANSACTION_COMMIT", b""),
]


def approx(seconds_ms: float) -> object:
    return pytest.approx(seconds_ms / 1000.0, abs=1e-9)


@pytest.mark.parametrize("numbering", ["final", "2015-06", "2015-03"])
@pytest.mark.parametrize("chunk_size", [64, 1 << 20])
@pytest.mark.parametrize("engine", ENGINES)
def test_c8_core_scenario(tmp_path: Path, numbering: str, chunk_size: int, engine: str) -> None:
    path = write_c8(tmp_path / "core.log", CORE, events=numbering)
    report = analyse(str(path), events=numbering, chunk_size=chunk_size, engine=engine)
    assert (report["format"], report["events"], report["event_count"]) == ("c8", numbering, 22)
    assert report["total_real_time"] == approx(600)
    cpu = report["cpu_time"]
    assert cpu["committed"] == approx(750)
    assert cpu["aborted"] == approx(260)
    assert cpu["paused"] == approx(170)
    assert cpu["total"] == approx(1180)
    assert cpu["gc_minor"] == approx(10)
    assert cpu["gc_major"] == approx(20)
    txn = report["transactions"]
    assert (txn["committed"], txn["aborted"], txn["total"]) == (3, 1, 4)
    assert txn["per_second"] == pytest.approx(4 / 1.18)
    assert txn["abort_rate"] == 0.25
    wr, inev = report["conflicts"]
    assert (wr["event"], wr["markers"], wr["count"]) == (
        "STM_CONTENTION_WRITE_READ", [W.decode()], 1)
    assert (wr["aborted_time"], wr["paused_time"]) == (approx(240), approx(0))
    assert (inev["event"], inev["markers"], inev["count"]) == (
        "STM_BECOME_INEVITABLE", [M2.decode()], 1)
    assert (inev["aborted_time"], inev["paused_time"]) == (approx(0), approx(150))
    # Time lines: the contention at 250 ms of 600, the inevitable event at 150 ms,
    # bucketed with PyPy's float formula (250/600*60 lands just below 25).
    start, end = 1000.0, 1000 + 0.000000001 * 600_000_000
    for conflict, at in ((wr, 250), (inev, 150)):
        bucket = int((1000 + 0.000000001 * at * 1_000_000 - start) / (end - start) * 60)
        assert conflict["timeline"].index(1) == bucket and sum(conflict["timeline"]) == 1
    per_thread = {t["thread"]: t for t in report["threads"]}
    assert per_thread[1]["cpu_time"]["committed"] == approx(300)
    assert per_thread[2]["cpu_time"]["paused"] == approx(150)
    assert per_thread[3]["cpu_time"]["aborted"] == approx(260)
    assert (per_thread[3]["committed"], per_thread[3]["aborted"]) == (1, 1)
    assert per_thread[3]["abort_rate"] == 0.5
    assert [(loc["file"], loc["line"]) for loc in report["locations"]] == [
        ("/srv/app/model.py", 5), ("/srv/app/handlers.py", 22)]
    assert report["warnings"] == []


@pytest.mark.parametrize("engine", ENGINES)
def test_c8_detach_reattach_and_gc_while_detached(tmp_path: Path, engine: str) -> None:
    # START 0; DETACH 90 (90 ms run); REATTACH 120 (detached time is not CPU time,
    # and REATTACH counts as becoming inevitable); WAIT_OTHER_INEVITABLE 130 ..
    # WAIT_DONE 170 (40 ms charged to REATTACH); DETACH 200 (30 ms run);
    # GC_MINOR_START 220 while detached -> run again; GC_MINOR_DONE 230; COMMIT 250
    # (30 ms run). Committed 90 + 10 + 30 + 30 = 160 ms, paused 40 ms, minor GC 10 ms.
    records = [
        (ms(0), 1, "TRANSACTION_START", b""),
        (ms(90), 1, "TRANSACTION_DETACH", b""),
        (ms(120), 1, "TRANSACTION_REATTACH", b""),
        (ms(130), 1, "WAIT_OTHER_INEVITABLE", b""),
        (ms(170), 1, "WAIT_DONE", b""),
        (ms(200), 1, "TRANSACTION_DETACH", b""),
        (ms(220), 1, "GC_MINOR_START", b""),
        (ms(230), 1, "GC_MINOR_DONE", b""),
        (ms(250), 1, "TRANSACTION_COMMIT", b""),
    ]
    report = analyse(str(write_c8(tmp_path / "d.log", records)), engine=engine)
    assert report["cpu_time"]["committed"] == approx(160)
    assert report["cpu_time"]["paused"] == approx(40)
    assert report["cpu_time"]["gc_minor"] == approx(10)
    (conflict,) = report["conflicts"]
    assert (conflict["event"], conflict["markers"], conflict["count"]) == (
        "STM_TRANSACTION_REATTACH", [""], 1)
    assert conflict["paused_time"] == approx(40)


@pytest.mark.parametrize("engine", ENGINES)
def test_c8_inevitable_wait_charged_to_first_inevitable_event_each_time(tmp_path: Path,
                                                                        engine: str) -> None:
    # Two waits in one transaction, both charged to the FIRST inevitable marker;
    # a wait left open by an ABORT is forgotten at the next START.
    records = [
        (ms(0), 1, "TRANSACTION_START", b""),
        (ms(10), 1, "BECOME_INEVITABLE", M1),
        (ms(20), 1, "BECOME_INEVITABLE", M2),
        (ms(30), 1, "WAIT_OTHER_INEVITABLE", b""),
        (ms(50), 1, "WAIT_DONE", b""),
        (ms(60), 1, "WAIT_OTHER_INEVITABLE", b""),
        (ms(65), 1, "WAIT_DONE", b""),
        (ms(70), 1, "BECOME_INEVITABLE", M2),
        (ms(80), 1, "WAIT_OTHER_INEVITABLE", b""),
        (ms(90), 1, "TRANSACTION_ABORT", b""),
        (ms(100), 1, "TRANSACTION_START", b""),
        (ms(110), 1, "WAIT_DONE", b""),
        (ms(120), 1, "TRANSACTION_COMMIT", b""),
    ]
    report = analyse(str(write_c8(tmp_path / "w.log", records)), engine=engine)
    (conflict,) = report["conflicts"]
    assert (conflict["markers"], conflict["count"]) == ([M1.decode()], 2)
    assert conflict["paused_time"] == approx(25)
    # Transaction 1: run 0-30, 50-60, 65-80 = 55 ms aborted; paused 20+5+10 = 35 ms.
    # Transaction 2: run 100-120 (its WAIT_DONE has no wait open) = 20 ms committed.
    assert report["cpu_time"]["aborted"] == approx(55)
    assert report["cpu_time"]["committed"] == approx(20)
    assert report["cpu_time"]["paused"] == approx(35)


@pytest.mark.parametrize("engine", ENGINES)
def test_c8_conflict_ranking_ties_follow_pypy(tmp_path: Path, engine: str) -> None:
    # Equal lost time: PyPy sorted ascending then reversed, so the conflict seen
    # last comes first among equals.
    records = []
    for i, marker in enumerate((b"first", b"second")):
        base = i * 100
        records += [(ms(base), 1, "TRANSACTION_START", b""),
                    (ms(base + 10), 1, "CONTENTION_WRITE_READ", marker),
                    (ms(base + 20), 1, "TRANSACTION_ABORT", b"")]
    report = analyse(str(write_c8(tmp_path / "tie.log", records)), engine=engine)
    assert [c["markers"] for c in report["conflicts"]] == [["second"], ["first"]]


def test_c7_scenario(tmp_path: Path) -> None:
    # thread 1: START 0, WRITE_WRITE(A, B) 100, ABORT 200 -> 200 ms to conflict 1 (+1 us).
    # thread 2: START 50, INEVITABLE(C, D) 150, WAIT_CONTENTION 160, WAIT_DONE 260
    #   (100 ms paused to conflict 2), COMMIT 360 -> 310 - 100 = 210 ms CPU.
    # thread 4: START 250; thread 3: START 300, WRITE_READ(E) 310, ABORTING_OTHER
    #   (victim 4) 320; thread 4 ABORT 400 -> 150 ms to conflict 3 (+1 us);
    #   thread 3 COMMIT 450 -> 150 ms.  Total CPU 200 + 210 + 150 + 150 = 710 ms.
    records = [
        (ms(0), 1, 0, "TRANSACTION_START", b"", b""),
        (ms(50), 2, 0, "TRANSACTION_START", b"", b""),
        (ms(100), 1, 2, "CONTENTION_WRITE_WRITE", b"A", b"B"),
        (ms(150), 2, 1, "CONTENTION_INEVITABLE", b"C", b"D"),
        (ms(160), 2, 0, "WAIT_CONTENTION", b"", b""),
        (ms(200), 1, 0, "TRANSACTION_ABORT", b"", b""),
        (ms(250), 4, 0, "TRANSACTION_START", b"", b""),
        (ms(260), 2, 0, "WAIT_DONE", b"", b""),
        (ms(300), 3, 0, "TRANSACTION_START", b"", b""),
        (ms(310), 3, 4, "CONTENTION_WRITE_READ", b"E", b""),
        (ms(320), 3, 4, "ABORTING_OTHER_CONTENTION", b"", b""),
        (ms(360), 2, 0, "TRANSACTION_COMMIT", b"", b""),
        (ms(400), 4, 0, "TRANSACTION_ABORT", b"", b""),
        (ms(450), 3, 0, "TRANSACTION_COMMIT", b"", b""),
    ]
    report = analyse(str(write_c7(tmp_path / "c7.log", records)), chunk_size=64)
    assert (report["format"], report["events"]) == ("c7", "c7")
    assert report["total_real_time"] == approx(450)
    assert report["cpu_time"] == {"total": approx(710)}
    assert (report["transactions"]["committed"], report["transactions"]["aborted"]) == (2, 2)
    c1, c3, c2 = report["conflicts"]
    assert (c1["event"], c1["markers"], c1["count"]) == ("STM_CONTENTION_WRITE_WRITE",
                                                         ["A", "B"], 1)
    assert (c1["aborted_time"], c1["paused_time"]) == (approx(200), approx(0.001))
    assert (c3["event"], c3["markers"]) == ("STM_CONTENTION_WRITE_READ", ["E"])
    assert (c3["aborted_time"], c3["paused_time"]) == (approx(150), approx(0.001))
    assert (c2["event"], c2["markers"]) == ("STM_CONTENTION_INEVITABLE", ["C", "D"])
    assert (c2["aborted_time"], c2["paused_time"]) == (approx(0), approx(100))
    assert len(c1["timeline"]) == 48


def test_percent_matches_pypys_format() -> None:
    assert percent(1, 3) == "33%"
    assert percent(1, 200) == "0.5%"
    assert percent(5, 5) == "100%"
    assert percent(1, 0) == "n/a"


# ---------------------------------------------------------------------------
# The vectorised C8 pass against a plain per-event state machine written from
# the rules in pypystm-log-format.md, on random logs, at random chunk sizes.

def reference_c8(records: list) -> dict:
    """PyPy's C8 counting rules, one event at a time (the test oracle)."""
    threads: dict[int, dict] = {}
    conflicts: dict[tuple[str, bytes], list[float]] = {}
    for (sec, nsec), num, name, marker in records:
        now = sec + 0.000000001 * nsec
        t = threads.setdefault(num, dict(prev=0.0, state="stop", cpu=0.0, pause=0.0,
                                         aborting=False, inev=None, wait=None, last_wait=None,
                                         minor=None, major=None, committed=0.0, aborted=0.0,
                                         paused=0.0, gc_minor=0.0, gc_major=0.0, n_commit=0,
                                         n_abort=0))

        def progress(state: str) -> None:
            if t["state"] == "run":
                t["cpu"] += now - t["prev"]
            elif t["state"] == "pause":
                t["pause"] += now - t["prev"]
            t["prev"], t["state"] = now, state

        def charge(key: tuple[str, bytes], aborted: float, paused: float) -> None:
            c = conflicts.setdefault(key, [0, 0.0, 0.0])
            c[0] += 1
            c[1] += aborted
            c[2] += paused

        name = "STM_" + name
        if name == "STM_TRANSACTION_START":
            t.update(cpu=0.0, pause=0.0, aborting=False, inev=None, wait=None, minor=None)
            progress("run")
        elif name == "STM_TRANSACTION_DETACH":
            progress("detached")
        elif name in ("STM_TRANSACTION_REATTACH", "STM_BECOME_INEVITABLE"):
            progress("run")
            if t["inev"] is None:
                t["inev"] = (name, marker)
        elif name in ("STM_TRANSACTION_COMMIT", "STM_TRANSACTION_ABORT"):
            progress("stop")
            kind = "committed" if name.endswith("COMMIT") else "aborted"
            t[kind] += t["cpu"]
            t["paused"] += t["pause"]
            t["n_commit" if kind == "committed" else "n_abort"] += 1
        elif name == "STM_CONTENTION_WRITE_READ":
            if not t["aborting"]:
                t["aborting"] = True
                progress("run")
                charge((name, marker), t["cpu"], t["pause"])
        elif name in ("STM_WAIT_FREE_SEGMENT", "STM_WAIT_SYNCING", "STM_WAIT_SYNC_PAUSE",
                      "STM_WAIT_OTHER_INEVITABLE"):
            progress("pause")
            t["last_wait"] = name
            if name == "STM_WAIT_OTHER_INEVITABLE" and t["inev"] is not None:
                t["wait"] = now
        elif name == "STM_WAIT_DONE":
            progress("stop" if t["last_wait"] == "STM_WAIT_FREE_SEGMENT" else "run")
            if t["wait"] is not None:
                charge(t["inev"], 0.0, now - t["wait"])
                t["wait"] = None
        elif name == "STM_GC_MINOR_START":
            if t["state"] == "detached":
                progress("run")
            t["minor"] = now
        elif name == "STM_GC_MAJOR_START":
            t["major"] = now
        elif name in ("STM_GC_MINOR_DONE", "STM_GC_MAJOR_DONE"):
            kind = "minor" if "MINOR" in name else "major"
            if t[kind] is not None:
                t["gc_" + kind] += now - t[kind]
                t[kind] = None
    total = {k: sum(t[k] for t in threads.values())
             for k in ("committed", "aborted", "paused", "gc_minor", "gc_major", "n_commit",
                       "n_abort")}
    return {"total": total, "conflicts": conflicts}


@st.composite
def random_c8_logs(draw: st.DrawFn) -> list:
    count = draw(st.integers(1, 80))
    names = [n[4:] for n in C8_FINAL.names]
    # Mostly plausible transactions, with every event mixed in at random.
    weights = st.sampled_from(names + ["TRANSACTION_START"] * 3 + ["TRANSACTION_COMMIT"] * 2
                              + ["BECOME_INEVITABLE", "WAIT_OTHER_INEVITABLE", "WAIT_DONE"] * 2)
    now = 5_000_000_000
    records = []
    for _ in range(count):
        now += draw(st.integers(0, 50_000_000))
        records.append((divmod(now, 1_000_000_000), draw(st.integers(1, 4)), draw(weights),
                        draw(st.sampled_from([b"", b"m1", b"m2", M1]))))
    return records


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=random_c8_logs(), chunk_size=st.sampled_from([64, 150, 1000, 1 << 20]))
@pytest.mark.parametrize("engine", ENGINES)
def test_c8_passes_equal_the_reference_state_machine(tmp_path: Path, records: list,
                                                     chunk_size: int, engine: str) -> None:
    path = write_c8(tmp_path / "random.log", records)
    report = analyse(str(path), chunk_size=chunk_size, engine=engine)
    expected = reference_c8(records)
    # The C pass adds in PyPy's order: bit for bit. The numpy pass: to rounding.
    close = (lambda x: x) if engine == "c" else (lambda x: pytest.approx(x, abs=1e-9))
    cpu, total = report["cpu_time"], expected["total"]
    for key in ("committed", "aborted", "paused", "gc_minor", "gc_major"):
        assert cpu[key] == close(total[key]), key
    assert report["transactions"]["committed"] == total["n_commit"]
    assert report["transactions"]["aborted"] == total["n_abort"]
    got = {(c["event"], c["markers"][0].encode()): [c["count"], c["aborted_time"],
                                                    c["paused_time"]]
           for c in report["conflicts"]}
    assert got.keys() == expected["conflicts"].keys()
    for key, (count, aborted, paused) in expected["conflicts"].items():
        assert got[key][0] == count
        assert got[key][1] == close(aborted)
        assert got[key][2] == close(paused)
    lost = [c["lost_time"] for c in report["conflicts"]]
    assert lost == sorted(lost, reverse=True)
    assert all(not math.isnan(x) for x in cpu.values())


def test_numbering_tables_cover_the_same_events_as_final() -> None:
    for table in C8_TABLES.values():
        assert set(table.names) <= set(C8_FINAL.names)
        assert np.all(np.diff(sorted(table.to_final())) > 0)


@settings(max_examples=int(os.environ.get("STMLOG_FUZZ_EXAMPLES", "100")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=400), numbering=st.sampled_from(["final", "2015-06", "2015-03"]))
def test_fuzzed_c8_bytes_give_the_same_answer_from_both_passes(tmp_path: Path, body: bytes,
                                                               numbering: str) -> None:
    if not c_accelerator_built():
        pytest.skip("stmlog_tools._fastc8 not built")
    path = tmp_path / "fuzz.log"
    path.write_bytes(b"STMGC-C8-PROF01\n" + body)
    answers = []
    for engine in ("c", "numpy"):
        try:
            answers.append(analyse(str(path), events=numbering, engine=engine, chunk_size=100))
        except LogError as exc:
            answers.append(str(exc))
    by_c, by_numpy = answers
    if isinstance(by_c, str) or isinstance(by_numpy, str):
        assert by_c == by_numpy
    else:
        assert same_report(by_c, by_numpy)
