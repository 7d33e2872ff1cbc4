"""Loading a generated program (instrumented or plain) and running it.

``load(program, directory, instrumented=...)`` writes the source to a file
(so tracebacks and ``linecache`` show it) and executes it as a fresh
module: rewritten for the STM, or plain Python. ``run_concurrent`` drives
it from several threads (each call of an ``op_*`` function from the
uninstrumented driver is one atomic section under the STM), or through
``transaction.TransactionQueue``; ``run_serial`` makes the same calls one
after another on one thread, the reference that checks the generator. An
:class:`Outcome` gathers what no serial order could produce: torn states
seen by sections, unexpected exceptions, broken final invariants, hangs.
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from tests.stm.difftest.program import Program
from tornado_stm.instrument import compile_instrumented, prepare_namespace

#: A run that has not finished after this many seconds is reported as a hang.
HANG_SECONDS = 60.0

_serial = itertools.count()


@dataclass
class Outcome:
    """What one run of a program showed."""

    torn: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def broken(self) -> bool:
        return bool(self.torn or self.errors or self.problems)

    def summary(self, limit: int = 4) -> str:
        parts = []
        for label, items in (("torn state seen", self.torn), ("unexpected exception", self.errors),
                             ("final invariant broken", self.problems)):
            if items:
                counted = Counter(items).most_common(limit)
                shown = "; ".join(f"{text} (x{n})" if n > 1 else text for text, n in counted)
                more = f" ... and {len(set(items)) - limit} more" if len(set(items)) > limit else ""
                parts.append(f"{label} [{len(items)}]: {shown}{more}")
        return " | ".join(parts) or "ok"


def load(program: Program, directory: Path, *, instrumented: bool) -> ModuleType:
    """A fresh module running ``program``'s source, rewritten for the STM or plain."""
    tag = "stm" if instrumented else "plain"
    name = f"difftest_{tag}_{program.family}_{program.seed}_{next(_serial)}"
    return load_source(program.source, name, directory, instrumented=instrumented)


def load_source(source: str, name: str, directory: Path, *, instrumented: bool) -> ModuleType:
    """A fresh module ``name`` running ``source`` (written into ``directory``,
    for tracebacks), rewritten for the STM or plain."""
    path = directory / f"{name}.py"
    path.write_text(source)
    module = ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    try:
        if instrumented:
            code = compile_instrumented(source, str(path))
            prepare_namespace(module.__dict__)
        else:
            code = compile(source, str(path), "exec", dont_inherit=True)
        exec(code, module.__dict__)
    finally:
        sys.modules.pop(name, None)
    return module


def _describe(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = next((f"line {frame.lineno}: {frame.line}" for frame in reversed(frames)
                  if "difftest_" in frame.filename), None)
    if where is None and frames:
        last = frames[-1]
        where = f"{Path(last.filename).name}:{last.lineno} ({last.name})"
    return f"{type(exc).__name__}: {exc} at {where}"


class _Tally:
    """Per-op call counts and exceptions, shared by the driver threads."""

    def __init__(self, module: ModuleType) -> None:
        self.planned_type = module.Planned
        self.calls: Counter[str] = Counter()
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def call(self, module: ModuleType, op: str, arg: int) -> None:
        planned = False
        error = None
        try:
            getattr(module, op)(arg)
        except self.planned_type:
            planned = True
        except Exception as exc:  # what no serial run raises: reported
            error = f"{op}({arg}): {_describe(exc)}"
        with self.lock:
            self.calls[op] += 1
            if planned:
                self.calls["_planned"] += 1
            if error is not None:
                self.errors.append(error)


def _finish(module: ModuleType, tally: _Tally, started: float) -> Outcome:
    outcome = Outcome(torn=[str(item) for item in module.TORN], errors=list(tally.errors),
                      calls=dict(tally.calls), seconds=time.perf_counter() - started)
    try:
        outcome.problems = list(module.check(dict(tally.calls)))
    except Exception as exc:
        outcome.problems = [f"check() raised {_describe(exc)}"]
    return outcome


def run_concurrent(program: Program, module: ModuleType, *, queue: bool | None = None) -> Outcome:
    """Run every scheduled call on ``program.threads`` threads at once."""
    tally = _Tally(module)
    per_thread = program.calls()
    use_queue = program.use_queue if queue is None else queue
    started = time.perf_counter()
    if use_queue:
        # Each queued call is one section; the queue re-raises the first
        # exception (after cancelling the calls not started yet).
        from tornado_stm import transaction
        tq = transaction.TransactionQueue()
        for step in range(program.calls_per_thread):
            for row in per_thread:
                op, arg = row[step]
                tq.add(getattr(module, op), arg)
                tally.calls[op] += 1
        done = threading.Event()
        failure: list[BaseException] = []

        def drive() -> None:
            try:
                tq.run(program.threads)
            except BaseException as exc:
                failure.append(exc)
            finally:
                done.set()

        runner = threading.Thread(target=drive, daemon=True)
        runner.start()
        if not done.wait(HANG_SECONDS):
            tally.errors.append(f"hang: TransactionQueue.run() still running after {HANG_SECONDS}s")
            return _finish_hung(module, tally, started)
        if failure:
            tally.errors.append(f"TransactionQueue.run raised {_describe(failure[0])}")
        return _finish(module, tally, started)

    barrier = threading.Barrier(program.threads)

    def work(row: list[tuple[str, int]]) -> None:
        barrier.wait()
        for op, arg in row:
            tally.call(module, op, arg)

    threads = [threading.Thread(target=work, args=(row,), daemon=True) for row in per_thread]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + HANG_SECONDS
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(thread.is_alive() for thread in threads):
        tally.errors.append(f"hang: driver threads still running after {HANG_SECONDS}s")
        return _finish_hung(module, tally, started)
    return _finish(module, tally, started)


def _finish_hung(module: ModuleType, tally: _Tally, started: float) -> Outcome:
    # The threads still run: do not call check() (it would race with them).
    return Outcome(torn=[str(item) for item in list(module.TORN)], errors=list(tally.errors),
                   calls=dict(tally.calls), seconds=time.perf_counter() - started)


def run_serial(program: Program, module: ModuleType) -> Outcome:
    """The same calls, one after another on this thread, round-robin over the threads' rows."""
    tally = _Tally(module)
    started = time.perf_counter()
    per_thread = program.calls()
    for step in range(program.calls_per_thread):
        for row in per_thread:
            op, arg = row[step]
            tally.call(module, op, arg)
    return _finish(module, tally, started)
