"""One process that instruments one STM workload and calls it N times: for counting.

    .venv-ft/bin/python bench/stm_calls.py astar 20     # bench_stm.py's A-star
    .venv-ft/bin/python bench/stm_calls.py game 100     # apps.astar_game.shortest_path
    .venv-ft/bin/python bench/stm_calls.py primes 1     # apps.primes.primes_up_to(10000)
    (plain-astar and plain-game: the same functions uninstrumented)

It prints nothing. Made to compare two trees of the engine with tools
that measure a whole process: CPU seconds (``/usr/bin/time -v``, runs of
the two trees in alternation), or instructions, which the machine's load
does not change (``PYTHONHASHSEED=0 valgrind --tool=cachegrind
--cache-sim=no``: the cost of one call is the difference between N calls
and one, divided by N - 1). Each workload is compiled alone, the same way
in every tree, so the number of live objects (which the garbage
collector's passes scale with) does not differ. Run from the tree's root.
"""

from __future__ import annotations

import inspect
import sys
from types import ModuleType

sys.path.insert(0, ".")

import apps.astar_game  # noqa: E402
import apps.primes  # noqa: E402
from bench.bench_stm import WORKLOAD_SOURCE  # noqa: E402
from tornado_stm import instrument  # noqa: E402
from tornado_stm.stm import fastpath  # noqa: E402


def instrumented(source: str, filename: str, name: str) -> ModuleType:
    module = ModuleType(name)
    sys.modules[name] = module          # dataclasses need their module there
    instrument.prepare_namespace(module.__dict__)
    exec(instrument.compile_instrumented(source, filename), module.__dict__)
    return module


def workload(what: str):
    """The function to call for ``what``, and its arguments."""
    if what in ("astar", "plain-astar"):
        if what == "astar":
            module = instrumented(WORKLOAD_SOURCE, "<bench workload>", "calls_stm")
        else:
            module = ModuleType("calls_plain")
            exec(compile(WORKLOAD_SOURCE, "<bench workload>", "exec"), module.__dict__)
        return module.astar, ((0, 0), (99, 99))
    if what == "primes":
        module = instrumented(inspect.getsource(apps.primes), apps.primes.__file__, "calls_p")
        return module.primes_up_to, (10_000,)
    if what in ("game", "plain-game"):
        game = apps.astar_game
        search = (instrumented(inspect.getsource(game), game.__file__, "calls_g").shortest_path
                  if what == "game" else game.shortest_path)
        grid = game.random_grid(96, 64, 0.2, 2014)      # Game()'s default map
        grid[0][0] = grid[63][95] = game.FREE
        return search, (grid, (0, 0), (95, 63))
    raise SystemExit(f"unknown workload {what!r}: astar, game, primes, plain-astar, plain-game")


def main() -> None:
    what, calls = sys.argv[1], int(sys.argv[2])
    if fastpath.BACKEND != "c":
        print(f"note: pure-Python barriers ({fastpath.REASON})", file=sys.stderr)
    function, args = workload(what)
    for _ in range(calls):
        function(*args)


if __name__ == "__main__":
    main()
