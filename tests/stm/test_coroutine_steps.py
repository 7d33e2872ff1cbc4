"""Steps of application coroutines and generators run outside sections: each holds W.

With one event loop per thread, framework code no longer holds the world
lock W, so a coroutine step resumed by a loop would read and write shared
state with nobody excluding the other threads' steps. ``section.entry``
wraps generator, coroutine and async generator functions so that each step
resumed outside a section holds W from its first barrier that may touch
shared state to its end (from its start with the pure-Python barriers).
These tests drive steps from loops on several threads, and show the lost
update when the wrapper's lock is taken away, or when the barriers do not
take it.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import threading
import time

import pytest

from tests.stm import helpers
from tests.stm.conftest import instrumented
from tests.stm.helpers import run_threads
from tornado_stm.stm import section, txn
from tornado_stm.stm.worldlock import WORLD_LOCK

lazy_steps = pytest.mark.skipif(not txn.BARRIERS_CHECK_STEPS[0],
                                reason="the pure-Python barriers take W at a step's start")


def _interleave_two_steps(app) -> None:
    """Thread A's step reads, then pauses; thread B runs a whole step meanwhile."""
    helpers.arm()
    try:
        first = threading.Thread(target=asyncio.run, args=(app.bump_across_a_pause(),))
        first.start()
        assert helpers.wait_until_paused()
        second = threading.Thread(target=asyncio.run, args=(app.bump(),))
        second.start()
        second.join(0.3)   # with the lock it cannot finish while A's step is paused
        helpers.release()
        first.join(30)
        second.join(30)
        assert not first.is_alive() and not second.is_alive()
    finally:
        helpers.disarm()


def test_a_step_holds_w_so_another_threads_step_waits() -> None:
    app = instrumented("asyncsteps")
    app.reset()
    _interleave_two_steps(app)
    assert app.TABLE["n"] == 2


def test_without_the_step_lock_the_update_is_lost(monkeypatch) -> None:
    """The same interleaving with steps resumed bare: the race the wrapper closes."""
    app = instrumented("asyncsteps")
    app.reset()
    monkeypatch.setattr(section, "_step", lambda resume, *args, **_: resume(*args))
    _interleave_two_steps(app)
    assert app.TABLE["n"] == 1


@pytest.mark.freethreaded
def test_steps_on_loops_of_four_threads_lose_no_update() -> None:
    app = instrumented("asyncsteps")
    app.reset()
    run_threads(4, lambda index: asyncio.run(app.bump_many(2000)))
    assert app.TABLE["n"] == 4 * 2000


def test_generators_and_async_generators_step_under_w_too() -> None:
    app = instrumented("asyncsteps")
    app.reset()
    run_threads(2, lambda index: list(app.bump_in_steps(500)))
    assert app.TABLE["n"] == 1000

    async def drain() -> list:
        return [value async for value in app.numbers(5)]
    assert asyncio.run(drain()) == [0, 1, 2, 3, 4]
    assert app.TABLE["n"] == 1005
    assert not WORLD_LOCK.held_by_current_thread()


def test_wrapped_functions_still_look_like_what_they_are() -> None:
    app = instrumented("asyncsteps")
    assert inspect.iscoroutinefunction(app.bump) or asyncio.iscoroutinefunction(app.bump)
    assert app.bump.__name__ == "bump" and app.bump.__wrapped__.__name__ == "bump"
    coroutine = app.bump()
    assert inspect.iscoroutine(coroutine)
    asyncio.run(coroutine)
    assert inspect.isgenerator(app.bump_in_steps(1))


@lazy_steps
def test_a_step_that_only_computes_does_not_take_w() -> None:
    app = instrumented("asyncsteps")
    before = dict(section.STEP_COUNTS)
    assert asyncio.run(app.compute_then_return(200)) == 200
    # The first step called asyncio.sleep (library code: W); the second
    # computed on its own objects and returned.
    assert section.STEP_COUNTS["took_w"] - before["took_w"] == 1
    assert section.STEP_COUNTS["without_w"] - before["without_w"] == 1
    assert not WORLD_LOCK.held_by_current_thread()


def _each_way_on_threads(app, threads: int, rounds: int, crunch: int = 30) -> dict:
    app.reset_each_way()

    async def client() -> None:
        for _ in range(rounds):
            await app.compute_then_bump_each_way(crunch)

    async def loop_of_one_thread() -> None:
        await asyncio.gather(*(client() for _ in range(4)))

    run_threads(threads, lambda index: asyncio.run(loop_of_one_thread()))
    return app.each_way()


@pytest.mark.freethreaded
def test_steps_taking_w_late_lose_no_update_through_any_barrier() -> None:
    """Each step computes before its first shared read: the read takes W, so
    the read-modify-write is still one atomic step, whatever the barrier."""
    app = instrumented("asyncsteps")
    expected = 4 * 4 * 60
    assert _each_way_on_threads(app, 4, 60) == {
        "table": expected, "tally": expected, "count": expected, "appended": expected,
        "locked": expected}


@pytest.mark.freethreaded
@lazy_steps
def test_when_no_barrier_takes_w_the_updates_are_lost(monkeypatch) -> None:
    """The same steps with W's taking made a no-op: shared reads race."""
    app = instrumented("asyncsteps")
    monkeypatch.setattr(WORLD_LOCK, "acquire", lambda *a, **k: True)
    monkeypatch.setattr(WORLD_LOCK, "release", lambda *a, **k: None)
    # (the subscript's read and write are apart by a computation; the lock
    # keeps its own count whatever W does). A race: up to three runs.
    for _ in range(3):
        counts = _each_way_on_threads(app, 4, 40, crunch=3000)
        assert counts["locked"] == 4 * 4 * 40, counts
        if counts["table"] < 4 * 4 * 40:
            break
    assert counts["table"] < 4 * 4 * 40, counts


# -- obj.method(args) after an await: the arguments before W ---------------------

def _stack_names(thread: threading.Thread) -> set[str]:
    frame = sys._current_frames().get(thread.ident)
    names = set()
    while frame is not None:
        names.add(frame.f_code.co_name)
        frame = frame.f_back
    return names


def _hold_w_while_spinning(app, ledger, between=lambda: None, coroutine=None) -> bool:
    """Run ``coroutine`` (compute_then_record) on a thread; once it spins in
    ``spin_until_stopped`` (its second step, computing without W), tell
    whether W is free then, and if so take it and run ``between()``; then
    let the spin end. The coroutine's result goes to ``ledger.result``."""
    if coroutine is None:
        coroutine = app.compute_then_record(ledger)

    def run() -> None:
        ledger.result = asyncio.run(coroutine)

    app.STOP_SPINNING = False
    worker = threading.Thread(target=run)
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while "spin_until_stopped" not in _stack_names(worker):
            assert worker.is_alive() and time.monotonic() < deadline, "the step never spun"
        w_free = not WORLD_LOCK.locked()
        if w_free:
            with WORLD_LOCK:
                between()
    finally:
        app.STOP_SPINNING = True
        worker.join(30)
    return w_free


@lazy_steps
def test_a_method_call_after_an_await_computes_its_arguments_before_taking_w() -> None:
    """``ledger.record(spin_until_stopped())``: looking ``record`` up first (plain
    Python's order) would take W before the computation, and an ``async def``
    handler's ``self.write(compute())`` would compute one coroutine at a time."""
    app = instrumented("asyncsteps")
    ledger = app.Ledger()
    assert _hold_w_while_spinning(app, ledger)           # W was free while it spun
    assert len(ledger.entries) == 1 and isinstance(ledger.entries[0], int)


@lazy_steps
def test_the_method_is_the_one_bound_when_the_step_takes_w() -> None:
    """Rebound while the step computed without W (by code holding W), the
    method called is the new one: the step runs as if it began when it took
    W, as in a serial run that puts it after that code."""
    app = instrumented("asyncsteps")
    ledger = app.Ledger()
    original = app.Ledger.record
    calls = []
    try:
        w_free = _hold_w_while_spinning(
            app, ledger, lambda: setattr(app.Ledger, "record", lambda self, v: calls.append(v)))
    finally:
        app.Ledger.record = original
    assert w_free and ledger.entries == [] and len(calls) == 1


def test_a_missing_method_fails_before_its_arguments_are_computed() -> None:
    app = instrumented("asyncsteps")
    assert asyncio.run(app.call_a_missing_method(app.Ledger())) == []


def test_a_method_whose_argument_awaits_is_looked_up_before_the_await() -> None:
    """``ledger.record(await gate)``: the lookup is made in the first step, as
    plain Python makes it; rebinding ``record`` during the await changes nothing."""
    app = instrumented("asyncsteps")
    ledger = app.Ledger()
    original = app.Ledger.record
    calls = []

    async def scenario() -> None:
        gate = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(app.record_what_is_awaited(ledger, gate))
        await asyncio.sleep(0)                   # the task awaits the gate now
        app.Ledger.record = lambda self, v: calls.append(v)
        gate.set_result("answer")
        await task

    try:
        asyncio.run(scenario())
    finally:
        app.Ledger.record = original
    assert ledger.entries == ["answer"] and calls == []


def test_a_method_the_arguments_rebind_is_the_one_found_before_them() -> None:
    """Red-team round 37: the lookup is put off only while the step touches
    nothing shared; the argument's rebinding takes W, and the lookup is made
    then, before it, so the method called is the one plain Python found."""
    app = instrumented("asyncsteps")
    ledger = app.Ledger()
    original = app.Ledger.record
    try:
        asyncio.run(app.call_what_the_arguments_rebind(ledger))
        asyncio.run(app.call_what_the_arguments_rebind(ledger))   # the replacement, now
    finally:
        app.Ledger.record = original
    assert ledger.entries == ["argument", ("replacement", "argument")]


@lazy_steps
def test_a_method_deleted_while_its_arguments_compute_fails_before_their_shared_writes() -> None:
    """Red-team round 37, finding 2: another thread deletes ``record`` while
    the step computes its argument; the lookup, made when the argument first
    touches shared state, fails there, before the argument's write, as the
    lookup fails before the argument in plain Python."""
    ledger = _delete_record_while_spinning("record_what_is_computed_and_noted")
    assert ledger.result == "AttributeError" and ledger.entries == []


@lazy_steps
def test_a_put_off_lookup_whose_call_never_comes_raises_nothing() -> None:
    """The argument raised, so the call was abandoned: the method deleted
    meanwhile is not looked for when the step takes W."""
    ledger = _delete_record_while_spinning("abandon_a_call_then_write")
    assert ledger.result == "done" and ledger.entries == ["written"]


def _delete_record_while_spinning(coroutine_function: str):
    """Run that coroutine of the app; ``Ledger.record`` is deleted while it
    spins without W (and put back after): its ledger."""
    app = instrumented("asyncsteps")
    ledger = app.Ledger()
    original = app.Ledger.record
    try:
        assert _hold_w_while_spinning(app, ledger, lambda: delattr(app.Ledger, "record"),
                                      getattr(app, coroutine_function)(ledger))
    finally:
        app.Ledger.record = original
    return ledger


def test_the_lookup_is_put_off_only_when_the_arguments_cannot_suspend() -> None:
    """Red-team round 37, finding 1b: an ``async for`` comprehension among
    the arguments suspends the step like an ``await``; the method is then
    looked up first, in the step where plain Python looks it up."""
    import ast

    from tornado_stm.instrument import rewriter

    source = (
        "async def handler(self, source):\n"
        "    self.write(render())\n"
        "    self.write(await fetch())\n"
        "    self.write([row async for row in source])\n"
        "    self.write({key: 1 async for key in source})\n")
    lines = ast.unparse(rewriter.rewrite(source, "<test>")).splitlines()
    calls = [line for line in lines if "'write'" in line]
    assert len(calls) == 4
    assert "_stm_gm" in calls[0]
    assert all("_stm_gm" not in line and "_stm_ga" in line for line in calls[1:])


def test_steps_of_a_function_reassigning_what_its_closures_read_take_w_first() -> None:
    """Red-team round 37, finding 5 (corpus: coroutine_closure_cells): the
    stores to a cell its nested functions read have no barrier."""
    import ast

    from tornado_stm.instrument import rewriter

    source = (
        "async def reassigns(self):\n"
        "    done = 0\n"
        "    def progress():\n"
        "        return done\n"
        "    done = 1\n"
        "async def only_reads(self):\n"
        "    def key(row):\n"
        "        return row[self.column]\n"
        "    return key\n"
        "async def by_match(self, value):\n"
        "    def seen():\n"
        "        return done\n"
        "    match value:\n"
        "        case done:\n"
        "            pass\n"
        "async def by_def(self):\n"
        "    def seen():\n"
        "        return done()\n"
        "    def done():\n"
        "        return 1\n"
        "async def by_except(self):\n"
        "    def seen():\n"
        "        return error\n"
        "    try:\n"
        "        pass\n"
        "    except Exception as error:\n"
        "        pass\n"
        "async def by_import(self):\n"
        "    def seen():\n"
        "        return json\n"
        "    import json\n")
    tree = rewriter.rewrite(source, "<test>")
    decorators = {node.name: [ast.unparse(d) for d in node.decorator_list]
                  for node in tree.body if isinstance(node, ast.AsyncFunctionDef)}
    # (round 38, finding 1: binding forms other than an assignment)
    for name in ("reassigns", "by_match", "by_def", "by_except", "by_import"):
        assert "_stm_entry_shared_cells" in decorators[name], name
    assert "_stm_entry" in decorators["only_reads"]
    assert "_stm_entry_shared_cells" not in decorators["only_reads"]


def test_generator_objects_tell_what_plain_python_tells() -> None:
    """Red-team round 38, finding 4: the objects that run an application's
    generator, coroutine or async generator in steps show its names, and
    ``close()`` returns what the frame returned on GeneratorExit (3.13)."""
    from tests.stm.conftest import plain

    def facts(app) -> list:
        generator = app.closes_with_a_value()
        next(generator)
        coroutine = app.compute_then_return(1)
        stream = app.a_stream()
        told = [generator.__name__, generator.__qualname__, generator.close(),
                coroutine.__name__, coroutine.__qualname__,
                stream.__name__, stream.__qualname__, stream.ag_running]
        asyncio.run(coroutine)
        return told

    assert facts(instrumented("asyncsteps")) == facts(plain("asyncsteps"))
