"""The A-star game's rules in-process: A* against breadth-first search, actions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.astar_game import FREE, WALL, BadRequest, Game, Refused, shortest_path
from bench.astar_rules import bfs_distance

grids = st.integers(2, 9).flatmap(lambda w: st.lists(
    st.lists(st.sampled_from([FREE, FREE, WALL]), min_size=w, max_size=w), min_size=2,
    max_size=9))


@settings(max_examples=300, deadline=None)
@given(grid=grids, data=st.data())
def test_astar_finds_a_shortest_wall_free_path(grid, data) -> None:
    height, width = len(grid), len(grid[0])
    cell = st.tuples(st.integers(0, width - 1), st.integers(0, height - 1))
    start, goal = data.draw(cell), data.draw(cell)
    path = shortest_path(grid, start, goal)
    distance = bfs_distance(grid, start, goal)
    if distance is None:
        assert path is None
        return
    assert path[0] == start and path[-1] == goal and len(path) - 1 == distance
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in zip(path, path[1:]))
    assert all(grid[y][x] == FREE for x, y in path)


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
