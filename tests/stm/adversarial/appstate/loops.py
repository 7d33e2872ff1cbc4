"""Event loops on threads of their own, for the corpus programs about
coroutine steps: each factory's coroutine runs with ``asyncio.run`` on a
thread the program's top-level code starts (plain code, as a server's
loops are), so every step of the application's coroutines takes W lazily
(``section._step``)."""

import asyncio
import threading


def run_loops(factories):
    """Run each factory's coroutine on its own thread's loop; each one's result, or what it raised."""
    results = [None] * len(factories)

    def on_a_thread(index):
        try:
            results[index] = asyncio.run(factories[index]())
        except BaseException as error:  # noqa: BLE001 - the program's verdict shows it
            results[index] = error

    threads = [threading.Thread(target=on_a_thread, args=(i,)) for i in range(len(factories))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def failures(results):
    """What the loops raised, shown."""
    return [repr(result) for result in results if isinstance(result, BaseException)]
