"""Game rules under concurrent players, checked by the benchmark's own checker.

``bench_astar`` plays the game with several threads at once and checks every
answer afterwards (the rules: bench/astar_rules.py). Here it runs for a
bounded number of actions, and the checker is shown to catch violations in
runs that break the rules.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys

import pytest

from bench.astar_rules import Event, check_run
from bench.bench_astar import MIXES, GameClient, SimulatedPlayer, run_players


def test_concurrent_players_never_break_the_rules(demo_server) -> None:
    result = run_players(demo_server.url, prefix="/astar", players=8, duration=60,
                         max_actions=60, seed=7)
    assert result.failures == [], demo_server.errors()
    assert result.violations == []
    assert result.requests == 8 * 60
    statuses = result.by_action
    # The run exercised every kind of action, with successes and refusals.
    assert {"move", "path", "state", "wall"} <= set(statuses)
    assert statuses["move"].get(200, 0) > 0 and statuses["wall"].get(200, 0) > 0


@pytest.fixture(scope="module")
def recorded_run(demo_server):
    """A real, legal run of 4 players, kept to be broken by the tests below."""
    client = GameClient(demo_server.url, "/astar")
    joined = [client.call("join", {"name": f"r{i}"})[1]["player"] for i in range(4)]
    initial = client.call("state")[1]
    client.close()
    players = [SimulatedPlayer(p["id"], (p["x"], p["y"]), random.Random(i),
                               initial["width"], initial["height"])
               for i, p in enumerate(joined)]
    for p in players:  # one after the other: a serial run is always legal
        p.play(GameClient(demo_server.url, "/astar"), float("inf"), 40, [])
    assert check_run(initial, players) == []
    return initial, players


def first_event(players, action: str, predicate=lambda e: True) -> Event:
    return next(e for p in players for e in p.events
                if e.action == action and e.status == 200 and predicate(e))


def test_checker_catches_a_path_through_a_wall(recorded_run) -> None:
    initial, players = copy.deepcopy(recorded_run)
    event = first_event(players, "path", lambda e: e.answer["path"] and
                        len(e.answer["path"]) > 2)
    # Pretend the wall of the middle cell existed at the version the path saw.
    x, y = event.answer["path"][1]
    initial["grid"][y][x] = 1
    assert any("crosses the wall" in v or "differs" in v or "shortest" in v
               for v in check_run(initial, players))


def test_checker_catches_two_wall_changes_with_one_version(recorded_run) -> None:
    initial, players = copy.deepcopy(recorded_run)
    walls = [e for p in players for e in p.events if e.action == "wall" and e.status == 200]
    assert len(walls) >= 2
    walls[1].answer["walls_version"] = walls[0].answer["walls_version"]
    assert any("lost update" in v for v in check_run(initial, players))


def test_checker_catches_two_players_on_one_cell(recorded_run) -> None:
    initial, players = copy.deepcopy(recorded_run)
    event = first_event(players, "state")
    a, b = event.answer["players"][:2]
    b["x"], b["y"] = a["x"], a["y"]
    assert any("share the cell" in v for v in check_run(initial, players))


def test_checker_catches_a_server_error(recorded_run) -> None:
    initial, players = copy.deepcopy(recorded_run)
    event = first_event(players, "move")
    event.status, event.answer = 500, "<html>500: Internal Server Error</html>"
    assert any("got 500" in v for v in check_run(initial, players))


def test_bench_astar_command_reports_a_clean_run(demo_server) -> None:
    done = subprocess.run([sys.executable, "-m", "bench.bench_astar", demo_server.url,
                           "--prefix", "/astar", "--players", "3", "--max-actions", "20",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["requests"] == 60 and summary["violations"] == 0
    assert summary["client_failures"] == []


def test_search_mix_on_the_large_map_keeps_the_rules(large_astar_server) -> None:
    result = run_players(large_astar_server.url, players=4, duration=120, max_actions=25,
                         seed=3, mix="search")
    assert result.failures == [] and result.violations == [], large_astar_server.errors()
    assert result.requests == 4 * 25 and result.mix == "search"
    assert result.by_action["path"].get(200, 0) > 0.5 * 4 * 25
    state = GameClient(large_astar_server.url).call("state")[1]
    assert (state["width"], state["height"]) == (200, 200)
    assert state["players"] == []  # the players left when the run ended


def test_far_goals_are_far_and_not_known_walls() -> None:
    mix = MIXES["search"]
    player = SimulatedPlayer(1, (0, 0), random.Random(5), 200, 200, mix)
    player.seen_walls = {(x, y) for x in range(200) for y in range(200) if (x + y) % 3 == 0}
    for _ in range(200):
        goal = player.far_goal()
        assert goal not in player.seen_walls and goal[0] + goal[1] >= 400 // 3
