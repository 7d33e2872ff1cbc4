"""The PyPy-STM ``transaction`` API on our engine, in-process and via ``tornado-stm exec``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import FREE_THREADED
from tests.stm.conftest import instrumented
from tornado_stm import transaction

ADDS = 2000 if FREE_THREADED else 500

#: A script in the style PyPy-STM users wrote: many add() calls updating
#: shared dicts, lists, objects and module globals, then run().
SCRIPT = textwrap.dedent('''
    import sys
    import transaction
    import pypystm
    from shapes import Tally

    counts = {}
    cells = [0] * 8
    tally = Tally()
    total = 0
    seen = transaction.stmset()

    def work(i):
        global total
        counts[i % 13] = counts.get(i % 13, 0) + 1
        cells[i % 8] += 1
        tally.add(i)
        total += i
        seen.add(i)
        if i % 100 == 0:
            transaction.add(work, -1 - i)      # added while running: runs in this run()

    n = int(sys.argv[1])
    for i in range(n):
        transaction.add(work, i)
    transaction.run()
    extra = [-1 - i for i in range(n) if i % 100 == 0]
    expected_total = sum(range(n)) + sum(extra)
    assert sum(counts.values()) == n + len(extra), counts
    assert sum(cells) == n + len(extra), cells
    assert tally.count == n + len(extra) and tally.total == expected_total
    assert total == expected_total, (total, expected_total)
    assert len(seen) == n + len(extra)
    assert transaction.number_of_transactions_in_last_run() == n + len(extra)
    assert not pypystm.is_atomic()
    print("ok", n + len(extra), pypystm.getsegmentlimit() >= 1)
''')

SHAPES = textwrap.dedent('''
    class Tally:
        def __init__(self):
            self.count = 0
            self.total = 0

        def add(self, value):
            self.count += 1
            self.total += value
''')


def _write_script(directory: Path) -> Path:
    (directory / "shapes.py").write_text(SHAPES)
    script = directory / "pypystm_style.py"
    script.write_text(SCRIPT)
    return script


def _exec(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tornado_stm", "exec", *args],
                          capture_output=True, text=True, timeout=240,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("backend", ["stm", "serial"])
def test_a_pypystm_script_runs_unchanged_under_exec(tmp_path: Path, backend: str) -> None:
    script = _write_script(tmp_path)
    result = _exec("--backend", backend, "--threads", "4", str(script), str(ADDS))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", str(ADDS + ADDS // 100), "True"]


#: The commonest shape of a PyPy-STM script: the work in main(), called from
#: the last line; a helper module that runs code at import too.
MAIN_SCRIPT = textwrap.dedent('''
    import sys
    import transaction
    import setup_at_import

    counts = {"n": 0}
    items = []

    def work(i):
        counts["n"] += 1
        items.append(i)

    def main():
        n = int(sys.argv[1])
        for i in range(n):
            transaction.add(work, i)
        transaction.run()
        assert counts["n"] == n and sorted(items) == list(range(n)), (counts, len(items))
        assert setup_at_import.TABLE == {"ready": True}
        print("ok", n)

    if __name__ == "__main__":
        main()
''')


@pytest.mark.parametrize("threads", ["1", "2", "4"])
def test_a_script_whose_main_calls_run_is_not_a_section(tmp_path: Path, threads: str) -> None:
    (tmp_path / "setup_at_import.py").write_text(textwrap.dedent('''
        TABLE = {}

        def prepare():
            TABLE["ready"] = True

        prepare()
    '''))
    script = tmp_path / "main_style.py"
    script.write_text(MAIN_SCRIPT)
    result = _exec("--threads", threads, str(script), str(ADDS))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", str(ADDS)]


def test_exec_reports_a_missing_script_in_one_line(tmp_path: Path) -> None:
    result = _exec(str(tmp_path / "missing.py"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"tornado-stm exec: cannot read {tmp_path / 'missing.py'}: No such file or directory"]


@pytest.mark.parametrize("variable, value, message", [
    ("TORNADO_STM_FAULTS", "1", "TORNADO_STM_FAULTS: unknown setting '1' (expected abort, "
                                "delay, seed)"),
    ("TORNADO_STM_POLICY", "{missing}", "policy file {missing}: No such file or directory"),
    ("TORNADO_STM_MAX_ABORTS", "ten", "TORNADO_STM_MAX_ABORTS='ten': not a whole number"),
    ("TORNADO_STM_MAX_ABORTS", "0", "TORNADO_STM_MAX_ABORTS='0': must be at least 1"),
])
def test_exec_reports_bad_engine_settings_in_one_line(tmp_path: Path, variable: str, value: str,
                                                      message: str) -> None:
    script = _write_script(tmp_path)
    missing = str(tmp_path / "missing.toml")
    result = _exec(str(script), str(ADDS), env={variable: value.format(missing=missing)})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "tornado-stm: " + message.format(missing=missing)]


def test_exec_reports_a_syntax_error_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def broken(:\n    pass\n")
    result = _exec(str(bad))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "bad.py, line 1" in result.stderr


def test_the_script_s_own_exception_is_shown_with_its_line(tmp_path: Path) -> None:
    script = tmp_path / "fails.py"
    script.write_text("import transaction\n\ndef f(x):\n    return 1 // x\n\n"
                      "transaction.add(f, 0)\ntransaction.run()\n")
    result = _exec(str(script))
    assert result.returncode == 1
    assert "ZeroDivisionError" in result.stderr
    assert f'File "{script}", line 4, in f' in result.stderr


def test_queue_in_process_with_generators_and_nested_run_error() -> None:
    counters = instrumented("counters")
    counters.reset()
    queue = transaction.TransactionQueue()
    for _ in range(200):
        queue.add(counters.bump_all)
    steps: list[int] = []

    def stepper():
        for step in range(5):
            steps.append(step)
            yield

    queue.add_generator(stepper())
    queue.run(4)
    assert counters.totals()["dict item"] == 200
    assert steps == [0, 1, 2, 3, 4]

    nested = transaction.TransactionQueue()
    errors: list = []

    def runs_nested() -> None:
        try:
            transaction.run()
        except transaction.TransactionError as exc:
            errors.append(exc)

    nested.add(runs_nested)
    nested.run(2)
    assert len(errors) == 1


def test_first_exception_cancels_the_rest_and_is_reraised() -> None:
    queue = transaction.TransactionQueue()
    done: list[int] = []

    def fail() -> None:
        done.append(-1)                       # kept: written before the exception
        transaction.add(done.append, "follow-up")   # cancelled with the rest
        raise LookupError("first")

    queue.add(fail)
    for i in range(50):
        queue.add(done.append, i)
    with pytest.raises(LookupError, match="first"):
        queue.run(1)
    assert done == [-1]


def test_atomic_blocks_and_small_builtins() -> None:
    assert not transaction.is_atomic()
    with transaction.atomic:
        assert transaction.is_atomic()
        with transaction.atomic:
            assert transaction.is_atomic()
    assert not transaction.is_atomic()
    numbers = [transaction.count() for _ in range(5)]
    assert numbers == sorted(set(numbers))
    assert transaction.getsegmentlimit() >= 1
    assert transaction.clock() <= transaction.clock()
    ids = transaction.stmiddict()
    key = []
    ids[key] = "value"
    assert key in ids and ids[key] == "value" and ids.get([]) is None
    members = transaction.stmidset([key])
    assert key in members and [] not in members and len(members) == 1


def test_threadlocalproperty_is_per_thread() -> None:
    import threading

    class Holder:
        value = transaction.threadlocalproperty(lambda: "default")

    holder = Holder()
    holder.value = "main"
    seen: list = []
    thread = threading.Thread(target=lambda: seen.append(holder.value))
    thread.start()
    thread.join()
    assert seen == ["default"] and holder.value == "main"


def test_bad_backend_is_a_clear_error() -> None:
    with pytest.raises(transaction.TransactionError, match="backend 'nope'"):
        transaction.set_backend("nope")


def test_a_generator_left_suspended_at_exit_ends_quietly(tmp_path: Path) -> None:
    """A script's module-level generator, advanced by its calls, is finalized at
    interpreter exit: its step wrapper printed "Exception ignored ... TypeError"
    (the engine's module was already torn down; fifth round)."""
    script = tmp_path / "ticker.py"
    script.write_text(textwrap.dedent('''
        import transaction

        def ticker():
            n = 0
            while True:
                n += 1
                yield n

        TICKS = ticker()
        got = []

        def job(i):
            got.append(next(TICKS))

        for i in range(10):
            transaction.add(job, i)
        transaction.run()
        print(sorted(got) == list(range(1, 11)))
    '''))
    result = _exec("--threads", "2", str(script))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True"]
    assert "Exception ignored" not in result.stderr, result.stderr


@pytest.mark.parametrize("pure", ["0", "1"])
def test_recursion_goes_as_deep_as_in_plain_python(tmp_path: Path, pure: str) -> None:
    """With the barriers in Python (TORNADO_STM_PURE, fault injection) every
    instrumented call is two frames: a 900-level recursion that plain Python
    runs raised RecursionError at about 500 (fifth round)."""
    script = tmp_path / "deep.py"
    script.write_text(textwrap.dedent('''
        import transaction

        head = None
        for _ in range(900):
            head = {"next": head}
        out = []

        def length(node):
            return 0 if node is None else 1 + length(node["next"])

        def job(i):
            out.append(length(head))

        for i in range(2):
            transaction.add(job, i)
        transaction.run()
        print(out)
    '''))
    result = _exec("--threads", "2", str(script), env={"TORNADO_STM_PURE": pure})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[900,", "900]"]
