"""The A-star game's rules in-process: A* against breadth-first search, actions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.astar_game import FREE, WALL, BadRequest, Game, Refused, shortest_path
from bench.astar_rules import CHECKPOINT_EVERY, Event, MapHistory, astar_distance, bfs_distance

grids = st.integers(2, 9).flatmap(lambda w: st.lists(
    st.lists(st.sampled_from([FREE, FREE, WALL]), min_size=w, max_size=w), min_size=2,
    max_size=9))


@st.composite
def grid_and_two_cells(draw) -> tuple[list[list[int]], tuple[int, int], tuple[int, int]]:
    grid = draw(grids)
    cell = st.tuples(st.integers(0, len(grid[0]) - 1), st.integers(0, len(grid) - 1))
    return grid, draw(cell), draw(cell)


@settings(max_examples=300, deadline=None)
@given(case=grid_and_two_cells())
def test_astar_finds_a_shortest_wall_free_path(case) -> None:
    grid, start, goal = case
    path = shortest_path(grid, start, goal)
    distance = bfs_distance(grid, start, goal)
    if distance is None:
        assert path is None
        return
    assert path[0] == start and path[-1] == goal and len(path) - 1 == distance
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in zip(path, path[1:]))
    assert all(grid[y][x] == FREE for x, y in path)


@settings(max_examples=300, deadline=None)
@given(case=grid_and_two_cells())
def test_the_checkers_astar_distance_is_the_breadth_first_one(case) -> None:
    grid, start, goal = case
    assert astar_distance(grid, start, goal) == bfs_distance(grid, start, goal)


def test_map_history_rebuilds_every_version_in_any_order() -> None:
    # Toggle cells of a 3 x 3 map for several checkpoints' worth of versions.
    initial = [[0] * 3 for _ in range(3)]
    grids, events, grid = [initial], [], [row[:] for row in initial]
    for version in range(1, 3 * CHECKPOINT_EVERY + 6):
        x, y = version % 3, (version // 3) % 3
        build = not grid[y][x]
        grid[y][x] = int(build)
        grids.append([row[:] for row in grid])
        events.append(Event(1, "wall", {"x": x, "y": y, "wall": build}, 200,
                            {"walls_version": 10 + version}, 0.0, (0, 0)))
    violations: list[str] = []
    history = MapHistory(initial, 10, events[::-1], violations)
    assert violations == []
    order = list(range(len(grids)))
    order = order[::7] + order[::-3] + order
    for index in order:
        assert history.at(10 + index) == grids[index], index
    assert history.at(9) is None and history.at(10 + len(grids)) is None
    assert len(history.checkpoints) == len(events) // CHECKPOINT_EVERY + 1


def empty_game(width: int = 5, height: int = 4) -> Game:
    return Game(width, height, wall_density=0.0)


def test_players_join_on_distinct_free_cells_until_full() -> None:
    game = Game(4, 3, wall_density=0.0)
    cells = {(p.x, p.y) for p in (game.join(f"p{i}") for i in range(12))}
    assert len(cells) == 12
    with pytest.raises(Refused, match="no free cell"):
        game.join("one too many")


def test_moves_follow_the_rules() -> None:
    game = empty_game()
    a, b = game.join("a"), game.join("b")
    # Join spots follow the player id: on 5 x 4 cells, a at (4, 3), b next to it.
    assert ((a.x, a.y), (b.x, b.y)) == ((4, 3), (3, 3))
    with pytest.raises(Refused, match=f"player {b.id} stands at"):
        game.move(a.id, 3, 3)
    assert game.move(a.id, 4, 2) is a and (a.x, a.y, a.moves) == (4, 2, 1)
    with pytest.raises(Refused, match="not next to"):
        game.move(a.id, 4, 2)
    with pytest.raises(Refused, match="not next to"):
        game.move(a.id, 3, 1)
    assert game.move(b.id, 4, 3).moves == 1  # a's old cell is free again
    with pytest.raises(BadRequest, match="off the map"):
        game.move(a.id, 5, 2)
    with pytest.raises(BadRequest, match="unknown player 99"):
        game.move(99, 0, 0)


def test_walls_versioned_and_never_on_players() -> None:
    game = empty_game()
    p = game.join("p")
    free = (p.x + 1, p.y) if p.x + 1 < 5 else (p.x - 1, p.y)
    assert game.set_wall(p.id, *free, True) == 1
    with pytest.raises(Refused, match="already"):
        game.set_wall(p.id, *free, True)
    with pytest.raises(Refused, match="a wall stands"):
        game.move(p.id, *free)
    with pytest.raises(Refused, match=f"player {p.id} stands"):
        game.set_wall(p.id, p.x, p.y, True)
    assert game.set_wall(p.id, *free, False) == 2
    with pytest.raises(Refused, match="no wall"):
        game.set_wall(p.id, *free, False)
    assert game.walls_version == 2


def test_ask_path_keeps_the_last_path_for_the_page() -> None:
    game = empty_game()
    p = game.join("p")
    path, version = game.ask_path(p.id, (0, 0))
    assert version == 0 and path[0] == (p.x, p.y) and path[-1] == (0, 0)
    assert game.snapshot()["paths"] == {str(p.id): [list(c) for c in path]}
    game.leave(p.id)
    assert game.snapshot()["players"] == [] and game.snapshot()["paths"] == {}


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_idle_players_expire_and_free_the_full_game() -> None:
    clock = FakeClock()
    game = Game(5, 4, wall_density=0.0, max_players=3, idle_timeout=60, clock=clock)
    acting, watching, idle = (game.join(name) for name in ("acting", "watching", "idle"))
    with pytest.raises(Refused, match="full"):
        game.join("late")
    for _ in range(4):  # 80 s: one keeps acting, one keeps saying it is there
        clock.now += 20
        game.set_wall(acting.id, 0, 0, not game.grid[0][0])
        game.touch(watching.id)
    late = game.join("late")  # the idle player expired, making room
    assert {p["name"] for p in game.snapshot()["players"]} == {"acting", "watching", "late"}
    assert idle.id not in game.occupant.values()
    with pytest.raises(BadRequest, match=f"unknown player {idle.id}"):
        game.touch(idle.id)
    assert late.id not in game.expire_idle()


def test_a_snapshot_leaves_out_expired_players_and_their_paths() -> None:
    clock = FakeClock()
    game = Game(5, 4, wall_density=0.0, idle_timeout=10, clock=clock)
    p = game.join("p")
    game.ask_path(p.id, (0, 0))
    clock.now += 9.9
    assert [q["id"] for q in game.snapshot()["players"]] == [p.id]
    clock.now += 0.2
    state = game.snapshot()
    assert state["players"] == [] and state["paths"] == {} and game.occupant == {}


def test_last_seen_is_written_only_every_few_seconds() -> None:
    # Actions read last_seen and write it rarely: concurrent actions of
    # different players then share no writes but their own.
    clock = FakeClock()
    game = Game(5, 4, wall_density=0.0, idle_timeout=60, clock=clock)
    p = game.join("p")
    joined_at = p.last_seen
    clock.now += game.touch_every / 2
    game.ask_path(p.id, (0, 0))
    assert p.last_seen == joined_at
    clock.now += game.touch_every
    game.ask_path(p.id, (0, 0))
    assert p.last_seen == clock.now


def test_snapshot_can_leave_the_map_out() -> None:
    game = empty_game()
    assert "grid" in game.snapshot() and "grid" not in game.snapshot(grid=False)
    assert game.snapshot(grid=False)["walls_version"] == 0


def test_idle_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="idle_timeout"):
        Game(idle_timeout=0)
