"""TransactionalEventLoop at the asyncio level, on real threads.

The "sections" here do what an atomic section of the STM engine does:
give the world lock up (``WORLD_LOCK.suspend()``), run without it, and take
it back (``WORLD_LOCK.resume()``). Waits are bounded by timeouts, and are
only ever used to observe *whether* something ran meanwhile, never how fast.
"""

from __future__ import annotations

import asyncio
import contextvars
import socket
import sys
import threading
import time
from typing import Callable, TypeVar

import pytest
import tornado.ioloop

import tornado_stm
from tests.conftest import FREE_THREADED
from tornado_stm.loop import TransactionalEventLoop, new_event_loop
from tornado_stm.stm.worldlock import WORLD_LOCK

T = TypeVar("T")
#: How long a section waits to see whether another handle runs meanwhile.
OBSERVE_SECONDS = 2.0


def in_section(work: Callable[[], T]) -> T:
    """Run ``work`` the way an atomic section does: without the world lock."""
    token = WORLD_LOCK.suspend()
    try:
        return work()
    finally:
        WORLD_LOCK.resume(token)


@pytest.fixture
def loop():
    loop = new_event_loop(threads=2)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


def test_call_soon_order_is_fifo(loop: TransactionalEventLoop) -> None:
    order = []

    def schedule_many() -> None:
        for i in range(200):
            loop.call_soon(order.append, i)
        loop.call_soon(loop.stop)

    loop.call_soon(schedule_many)
    loop.run_forever()
    assert order == list(range(200))


def test_timers_run_in_deadline_order(loop: TransactionalEventLoop) -> None:
    order = []
    now = loop.time()
    for delay in (0.05, 0.01, 0.03, 0.02, 0.04):
        loop.call_at(now + delay, order.append, delay)
    loop.call_at(now + 0.06, loop.stop)
    loop.run_forever()
    assert order == [0.01, 0.02, 0.03, 0.04, 0.05]


def test_current_task_stays_right_across_sections(loop: TransactionalEventLoop) -> None:
    """Task steps that give W up mid-step: another task runs meanwhile, and
    each step still sees itself as the current task after taking W back."""
    spans: list[tuple[float, float, str]] = []

    async def job(n: int) -> int:
        me = asyncio.current_task()
        total = 0
        for _ in range(3):
            assert asyncio.current_task() is me
            assert asyncio.get_running_loop() is loop

            def work() -> int:
                start = time.monotonic()
                value = sum(i * i for i in range(60_000 + n))
                spans.append((start, time.monotonic(), threading.current_thread().name))
                return value

            total += in_section(work)
            assert asyncio.current_task() is me
            await asyncio.sleep(0)
        return total

    async def main() -> list[int]:
        return await asyncio.gather(*(job(n) for n in range(6)))

    results = loop.run_until_complete(main())
    assert results == [3 * sum(i * i for i in range(60_000 + n)) for n in range(6)]
    assert len({name for _, _, name in spans}) == 2  # the loop thread and one worker
    if FREE_THREADED:
        assert any(a is not b and a[0] < b[1] and b[0] < a[1] for a in spans for b in spans)


def test_without_the_current_task_swap_task_steps_collide(loop: TransactionalEventLoop) -> None:
    """The control for the test above: give W up *without* the context
    switch the loop registers, and the next task step cannot even start."""
    errors: list = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context.get("exception")))
    b_ran = threading.Event()

    async def a() -> None:
        loop._section_leaving()  # what the loop's switch hook does on suspend...
        WORLD_LOCK.release()     # ...but the current task is left in place
        try:
            b_ran.wait(OBSERVE_SECONDS)
        finally:
            WORLD_LOCK.acquire()

    async def b() -> None:
        b_ran.set()

    task_a = loop.create_task(a())
    task_b = loop.create_task(b())
    loop.run_until_complete(task_a)
    assert not b_ran.is_set()
    assert any(isinstance(error, RuntimeError) and "Cannot enter into task" in str(error)
               for error in errors), errors
    # b's only step failed before it began: the task can never finish.
    task_b.get_coro().close()
    task_b._log_destroy_pending = False


def test_each_handle_runs_in_its_own_context(loop: TransactionalEventLoop) -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    seen = []

    async def task(name: str) -> None:
        var.set(name)
        in_section(lambda: None)  # may come back on the same thread only
        await asyncio.sleep(0)    # the next step may run on another thread
        seen.append((name, var.get()))

    def plain_callback() -> None:
        seen.append(("callback", var.get()))

    async def main() -> None:
        loop.call_soon(plain_callback)
        await asyncio.gather(task("a"), task("b"), task("c"))

    loop.run_until_complete(main())
    assert sorted(seen) == [("a", "a"), ("b", "b"), ("c", "c"), ("callback", "unset")]


def _second_started_during_first(loop: TransactionalEventLoop, same_context: bool) -> bool:
    second_ran = threading.Event()
    observed = []
    shared = contextvars.copy_context()

    def first() -> None:
        observed.append(in_section(lambda: second_ran.wait(OBSERVE_SECONDS)))

    loop.call_soon(first, context=shared)
    loop.call_soon(second_ran.set, context=shared if same_context else None)
    loop.call_soon(loop.stop)
    loop.run_forever()
    assert second_ran.is_set()
    return observed[0]


def test_handles_of_one_context_never_overlap(loop: TransactionalEventLoop) -> None:
    assert not _second_started_during_first(loop, same_context=True)


def test_handles_of_different_contexts_do_overlap(loop: TransactionalEventLoop) -> None:
    # The control for the test above: the observation can tell.
    assert _second_started_during_first(loop, same_context=False)


def test_io_callbacks_of_one_fd_never_overlap(loop: TransactionalEventLoop) -> None:
    """The reader of a socket stays ready while its first call is in a section:
    the poll finds it again, and the second call waits for the first."""
    reader_sock, writer_sock = socket.socketpair()
    reader_sock.setblocking(False)
    calls = []
    running = threading.Event()
    try:
        def on_readable() -> None:
            if running.is_set():
                calls.append("overlap")
            running.set()
            try:
                if not calls:
                    calls.append("first")
                    # Leave one byte: the fd stays readable during the section.
                    reader_sock.recv(1)
                    in_section(lambda: time.sleep(0.3))
                else:
                    calls.append("second")
                    reader_sock.recv(1)
                    loop.remove_reader(reader_sock)
                    loop.call_soon(loop.stop)
            finally:
                running.clear()

        writer_sock.send(b"xy")
        loop.add_reader(reader_sock, on_readable)
        loop.run_forever()
        assert calls == ["first", "second"]
    finally:
        reader_sock.close()
        writer_sock.close()


def _io_ran_during_section(pipelining: bool) -> bool:
    loop = new_event_loop(threads=2, pipelining=pipelining)
    reader_sock, writer_sock = socket.socketpair()
    section_started = threading.Event()
    io_handled = threading.Event()
    observed = []
    try:
        def slow_handler() -> None:
            def work() -> bool:
                section_started.set()
                return io_handled.wait(OBSERVE_SECONDS)
            observed.append(in_section(work))
            loop.call_soon(loop.stop)

        def on_readable() -> None:
            reader_sock.recv(16)
            io_handled.set()

        def client() -> None:
            section_started.wait(OBSERVE_SECONDS)
            writer_sock.send(b"ping")

        loop.add_reader(reader_sock, on_readable)
        loop.call_soon(slow_handler)
        sender = threading.Thread(target=client)
        sender.start()
        loop.run_forever()
        sender.join()
        loop.remove_reader(reader_sock)
        return observed[0]
    finally:
        reader_sock.close()
        writer_sock.close()
        loop.close()


def test_pipelining_polls_while_a_section_runs() -> None:
    assert _io_ran_during_section(pipelining=True)


def test_without_pipelining_io_waits_for_the_batch() -> None:
    assert not _io_ran_during_section(pipelining=False)


def test_callback_errors_go_to_the_exception_handler(loop: TransactionalEventLoop) -> None:
    reported = []
    loop.set_exception_handler(lambda _loop, context: reported.append(
        (type(context.get("exception")).__name__, threading.current_thread().name)))

    def broken() -> None:
        raise ValueError("broken callback")

    def section_then_stop() -> None:
        in_section(lambda: time.sleep(0.2))  # "broken" runs meanwhile, on the worker
        loop.call_soon(loop.stop)

    loop.call_soon(section_then_stop)
    loop.call_soon(broken)
    loop.run_forever()
    assert reported == [("ValueError", "tornado-stm-worker-1")]
    # The loop goes on serving.
    assert loop.run_until_complete(asyncio.sleep(0, result=42)) == 42


def test_keyboard_interrupt_on_a_worker_leaves_run_forever(loop: TransactionalEventLoop) -> None:
    def interrupt() -> None:
        raise KeyboardInterrupt

    loop.call_soon(in_section, lambda: time.sleep(0.2))
    loop.call_soon(interrupt)
    with pytest.raises(KeyboardInterrupt):
        loop.run_forever()
    assert not loop.is_running()
    assert loop.run_until_complete(asyncio.sleep(0, result="still usable")) == "still usable"


def test_stop_waits_for_sections_in_flight(loop: TransactionalEventLoop) -> None:
    finished = []

    def long_section() -> None:
        in_section(lambda: time.sleep(0.3))
        finished.append("section")

    loop.call_soon(long_section)
    loop.call_soon(loop.stop)  # runs on the worker while the section runs
    loop.run_forever()
    assert finished == ["section"]


def test_threadsafe_calls_and_executor(loop: TransactionalEventLoop) -> None:
    async def main() -> tuple:
        from_executor = await loop.run_in_executor(None, lambda: threading.current_thread().name)
        done = asyncio.get_running_loop().create_future()
        # A foreign thread wakes the loop, blocked in select() with nothing to do.
        threading.Timer(0.05, loop.call_soon_threadsafe, (done.set_result, "woken")).start()
        return from_executor, await done

    executor_thread, woken = loop.run_until_complete(main())
    assert woken == "woken" and not executor_thread.startswith("tornado-stm")
    loop.run_until_complete(loop.shutdown_default_executor())


def test_async_generators_are_finalized(loop: TransactionalEventLoop) -> None:
    closed = []

    async def numbers():
        try:
            for i in range(10):
                yield i
        finally:
            closed.append(threading.current_thread().name)

    async def first_number_in_a_section() -> int:
        in_section(lambda: None)
        await asyncio.sleep(0)
        generator = numbers()
        return await generator.__anext__()  # left unfinished on purpose

    async def main() -> list[int]:
        return await asyncio.gather(first_number_in_a_section(), first_number_in_a_section())

    assert loop.run_until_complete(main()) == [0, 0]
    loop.run_until_complete(loop.shutdown_asyncgens())
    assert len(closed) == 2


def test_debug_mode_accepts_calls_from_worker_threads(loop: TransactionalEventLoop) -> None:
    loop.set_debug(True)
    threads = set()

    def record() -> None:
        threads.add(threading.current_thread().name)
        loop.call_soon(lambda: None)  # _check_thread runs here in debug mode

    loop.call_soon(in_section, lambda: time.sleep(0.2))
    for _ in range(5):
        loop.call_soon(record)
    loop.call_soon(loop.stop)
    loop.run_forever()
    assert "tornado-stm-worker-1" in threads


def test_close_ends_the_worker_threads() -> None:
    loop = new_event_loop(threads=3)

    async def three_sections() -> None:
        async def section() -> None:
            in_section(lambda: time.sleep(0.1))
        await asyncio.gather(section(), section(), section())

    loop.run_until_complete(three_sections())
    assert loop._workers, "no worker was recruited"
    loop.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("tornado-stm-worker")]


def test_close_right_after_sections_leaves_no_worker_behind() -> None:
    """A worker recruited late may still hold W when run_forever returns;
    close() must not let it park for ever (a race once seen in Tornado's
    SelectorThreadLeakTest)."""
    for _ in range(30):
        loop = new_event_loop(threads=2)

        async def section() -> None:
            in_section(lambda: None)

        loop.run_until_complete(section())
        workers = list(loop._workers)
        loop.close()
        assert not [worker for worker in workers if worker.is_alive()]


@pytest.fixture
def restore_policy():
    policy = asyncio.get_event_loop_policy()
    yield
    asyncio.set_event_loop_policy(policy)


def test_install_makes_asyncio_and_tornado_use_the_loop(restore_policy) -> None:
    tornado_stm.install(threads=2)

    async def main() -> tuple[type, type]:
        return (type(asyncio.get_running_loop()),
                type(tornado.ioloop.IOLoop.current().asyncio_loop))

    assert asyncio.run(main()) == (TransactionalEventLoop, TransactionalEventLoop)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="asyncio.run(loop_factory=) is 3.12+")
def test_loop_factory_for_asyncio_run() -> None:
    async def main() -> type:
        return type(asyncio.get_running_loop())

    assert asyncio.run(main(), loop_factory=tornado_stm.new_event_loop) is TransactionalEventLoop


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signal handlers need the tests to run on the main thread")
def test_signal_handlers_from_a_worker_thread(loop: TransactionalEventLoop) -> None:
    """signal.signal works only on the main thread: a task step on a worker
    hands add/remove_signal_handler over to the loop thread."""
    import os
    import signal

    heard = []

    async def on_worker() -> str:
        await asyncio.sleep(0)
        name = threading.current_thread().name
        got_signal = asyncio.get_running_loop().create_future()
        loop.add_signal_handler(signal.SIGUSR1, got_signal.set_result, "SIGUSR1")
        os.kill(os.getpid(), signal.SIGUSR1)
        heard.append(await got_signal)
        assert loop.remove_signal_handler(signal.SIGUSR1)
        return name

    async def main() -> list:
        async def hold_the_loop_thread() -> None:
            in_section(lambda: time.sleep(0.3))
        return await asyncio.gather(hold_the_loop_thread(), on_worker())

    _, worker_name = loop.run_until_complete(main())
    assert heard == ["SIGUSR1"]
    assert worker_name == "tornado-stm-worker-1"
