"""Differential tests of the STM: generated programs must behave as some serial order.

``tests/stm/difftest`` generates small modules from a seeded grammar, one
construct family at a time (dicts, lists, sets, ``collections`` types,
truthiness, operators, unpacking, lazy iterators, ``__slots__``, properties,
class attributes, globals, closures, exceptions after writes, sections that
become inevitable mid-way, shared containers given to uninstrumented calls,
and plain code reading shared state behind the barriers: ``copy.copy``,
``attrgetter`` keys, dataclass ``__eq__``/``__repr__``, ``match``,
comprehension unpacking, dict views made at import, ``array`` buffers, a
namedtuple of dataclass instances and an exception's arguments formatted;
a ``defaultdict``'s missing keys looked up by C code), the standard library
run on shared containers (``stdlib``: ``heapq``, ``bisect``, ``itertools``,
``functools.reduce``, ``operator`` getters, ``json``/``copy.deepcopy``
round trips, key functions reading a shared dict, a ``ChainMap``), special
methods of application classes called by C code (``dunders``: ``__lt__``
for sorting, ``__len__``/``__bool__``/``__iter__``/``__contains__``/
``__getitem__``, ``__enter__``/``__exit__``, ``__getattr__`` proxies,
``__hash__``/``__eq__`` keys; bound by ``def``, lambda, helper, after the
class, ``total_ordering``), generators made and consumed in a section
(``generators``: ``yield from``, ``send``, ``tee``, ``close``, generators
writing as they are resumed), class machinery (``classes``: descriptors,
``__slots__`` along a hierarchy, ``super()`` chains, metaclass properties,
module and namespace objects, nested ``nonlocal`` cells, dataclasses, a
metaclass ``__setattr__``, function and exception attributes), special
methods that count their own calls (``callcounts``: the interpreter and C
code call each exactly as often as CPython does), transfers inside
constructs that swallow every exception (``swallow``: bare ``except``,
``__exit__`` returning True, ``return`` in ``finally``...), records
replaced by equal but distinct objects in a set or as dict keys
(``records``), keys equal across types (``aliases``: ``1``/``1.0``/``True``,
``str`` subclasses, ``StrEnum``), and
what a section makes or lends that others see after it (``escapes-*``: a
pair published then filled after an inevitable turn, a dict view kept in a
global, a ``functools.wraps`` decorator counting calls).
Each program holds an invariant that every serial order of its sections
keeps; sections check it while they run and ``check()`` checks it at the end.

* ``test_generated_programs_are_serially_sound``: the reference. The plain
  module, its calls made one after another, breaks nothing (otherwise the
  generator is wrong, not the engine).
* ``test_stm_sections_one_at_a_time``: the program instrumented, its calls
  made one after another on one thread: each section alone must do what
  plain Python does (its own writes visible to every form of read, writes
  before an exception kept...). Deterministic.
* ``test_stm_runs_equal_a_serial_order``: the program instrumented, its
  sections run on 2 or 4 threads at once (plain threads or a
  ``TransactionQueue``). Nothing a serial run could not produce may show:
  a torn state seen by a section, an exception, a broken final invariant, a
  hang. On the GIL build the batch is smaller and the switch interval is
  shortened so that sections interleave.
* ``test_plain_threads_break_the_invariants`` (free-threaded only): the same
  programs, uninstrumented, on the same threads, do break their invariants:
  the tester sees races.

Every failing program is printed in full, with the command that reruns it.
Sizes: ``DIFFTEST_EXAMPLES`` programs per family (default 5 free-threaded,
3 with the GIL), ``DIFFTEST_SEED`` the first seed (default 0; seeds are
fixed so CI runs are stable), ``DIFFTEST_CALLS`` calls per thread,
``DIFFTEST_DUMP=dir`` also writes each failing program to ``dir``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FREE_THREADED
from tests.stm.difftest import FAMILIES, Outcome, Program, generate, load, run_concurrent, run_serial

#: The repository root, where ``python -m tests.stm.difftest`` runs.
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("DIFFTEST_EXAMPLES", "0")) or (5 if FREE_THREADED else 3)
FIRST_SEED = int(os.environ.get("DIFFTEST_SEED", "0"))
CALLS = int(os.environ.get("DIFFTEST_CALLS", "0")) or 30
#: Printed in full in the assertion message; every failing program is printed to stdout.
SHOWN = 3


def _programs(family: str) -> list[Program]:
    return [generate(family, seed, calls_per_thread=CALLS)
            for seed in range(FIRST_SEED, FIRST_SEED + EXAMPLES)]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("difftest")


@pytest.fixture
def interleaving() -> Iterator[None]:
    """With the GIL, switch threads often so that sections interleave."""
    if FREE_THREADED:
        yield
        return
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def _report(kind: str, failures: list[tuple[Program, Outcome]]) -> str:
    """Print every failing program in full; return the assertion message."""
    dump = os.environ.get("DIFFTEST_DUMP")
    blocks = []
    for program, outcome in failures:
        block = (f"===== {kind}: {program.name} ({program.variant})\n"
                 f"{outcome.summary()}\n"
                 f"rerun: python -m tests.stm.difftest {program.family} {program.seed} "
                 f"--calls {program.calls_per_thread}\n"
                 f"----- source\n{program.source}")
        blocks.append(block)
        print(block)
        if dump:
            Path(dump).mkdir(parents=True, exist_ok=True)
            (Path(dump) / f"{program.name}.py").write_text(program.source)
    names = "\n".join(f"  {program.name}: {outcome.summary()}" for program, outcome in failures)
    return (f"{len(failures)} generated program(s) {kind}:\n{names}\n\n"
            + "\n\n".join(blocks[:SHOWN])
            + (f"\n\n({len(blocks) - SHOWN} more failing programs printed on stdout)"
               if len(blocks) > SHOWN else ""))


def _serial_failures(family: str, workdir: Path, instrumented: bool) -> list:
    """(program, outcome) for the programs of ``family`` that break an invariant run serially."""
    failures = []
    for program in _programs(family):
        outcome = run_serial(program, load(program, workdir, instrumented=instrumented))
        if outcome.broken:
            failures.append((program, outcome))
    return failures


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_generated_programs_are_serially_sound(family: str, workdir: Path) -> None:
    """The reference: one call after another, no STM, breaks no invariant."""
    failures = _serial_failures(family, workdir, instrumented=False)
    assert not failures, _report("break an invariant even when run serially (generator bug)",
                                 failures)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_stm_sections_one_at_a_time(family: str, workdir: Path) -> None:
    """Instrumented, the calls made one after another: each section alone must act as plain Python."""
    failures = _serial_failures(family, workdir, instrumented=True)
    assert not failures, _report("break an invariant under the STM even with one thread", failures)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_stm_runs_equal_a_serial_order(family: str, workdir: Path, interleaving: None) -> None:
    """Instrumented and concurrent: nothing a serial order could not produce."""
    failures = []
    for program in _programs(family):
        outcome = run_concurrent(program, load(program, workdir, instrumented=True))
        if outcome.broken:
            failures.append((program, outcome))
    assert not failures, _report("are not equivalent to a serial order under the STM", failures)


def _plain_family(family: str) -> tuple[int, str]:
    """How many of ``family``'s programs broke an invariant on plain threads, and a crash if any.

    Run in a child process: racing plain threads can crash 3.13t itself (its C
    ``OrderedDict`` is not safe to iterate while another thread changes it),
    or leave it spinning. A crash or a hang counts for the program that was
    running: no serial run crashes or hangs. (A family runs in about a
    second.)
    """
    command = [sys.executable, "-m", "tests.stm.difftest", family, str(FIRST_SEED),
               "--programs", str(EXAMPLES), "--calls", str(CALLS), "--plain"]
    try:
        child = subprocess.run(command, cwd=REPO, capture_output=True, text=True,
                               timeout=PLAIN_FAMILY_SECONDS)
    except subprocess.TimeoutExpired as hung:
        return _programs_broken(hung.stdout).count("broken") + 1, "hung"
    finished = _programs_broken(child.stdout)
    broken = finished.count("broken")
    if child.returncode < 0 and len(finished) < EXAMPLES:
        return broken + 1, f"crashed by signal {-child.returncode}"
    assert child.returncode in (0, 1) and len(finished) == EXAMPLES, (
        f"{' '.join(command)} exited {child.returncode}:\n{child.stdout[-2000:]}{child.stderr[-2000:]}")
    return broken, ""


#: How long a family's child may run on plain threads before it counts as hung.
PLAIN_FAMILY_SECONDS = 60


def _programs_broken(output: "str | bytes | None") -> list[str]:
    """"broken" or "ok" for each program the child finished, from its output
    (bytes when a timeout cut it short)."""
    if isinstance(output, bytes):
        output = output.decode(errors="replace")
    return [line.split()[2] for line in (output or "").splitlines()
            if line.startswith("program ")]


@pytest.mark.freethreaded
def test_plain_threads_break_the_invariants(capsys: pytest.CaptureFixture) -> None:
    """Without the STM the same programs race: the tester does see broken invariants."""
    broken: dict[str, int] = {}
    notes: dict[str, str] = {}
    for family in sorted(FAMILIES):
        broken[family], note = _plain_family(family)
        if note:
            notes[family] = note
    total = EXAMPLES * len(FAMILIES)
    with capsys.disabled():
        print("\nwithout the STM, programs that broke an invariant: "
              + ", ".join(f"{family} {count}/{EXAMPLES}"
                          + (f" ({notes[family]})" if family in notes else "")
                          for family, count in broken.items()))
    detected = sum(broken.values())
    assert detected >= total // 4, (
        f"only {detected} of {total} generated programs broke an invariant on plain threads: "
        f"the race windows are too narrow for the tester to mean much ({broken})")


FOUND = sorted(p.stem for p in (REPO / "tests" / "stm" / "difftest" / "found").glob("*.py")
               if not p.stem.startswith("_"))


@pytest.mark.parametrize("name", FOUND)
def test_programs_the_tester_found_now_run_as_a_serial_run(name: str) -> None:
    """Each program reduced from a failure (``difftest/found``) gives what plain Python gives."""
    result = subprocess.run([sys.executable, "-m", f"tests.stm.difftest.found.{name}"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "same as a serial run" in result.stdout, (
        result.stdout + result.stderr)
