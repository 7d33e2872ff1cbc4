"""The A-star game's rules, checked after the fact on a recorded run.

``check_run`` takes the game's state when the run started and every
player's recorded requests and answers, and lists every violation:

* wall changes got consecutive versions (a repeated version is a lost
  update) and each was legal when made (no wall built on a wall, none
  destroyed where there was none);
* each path starts where its player stood, ends at the goal, moves one cell
  at a time, crosses no wall of the walls version it reports, and is as
  short as a breadth-first search on that map says (None only when the goal
  is unreachable);
* each move goes next to where the player stood, and its answer matches the
  request and the player's move count;
* each state has the exact map of its walls version, no player in a wall,
  no two players on one cell, and every recorded player where its own
  move history says;
* no server error, and no 400 (the players send only valid requests).

The map at every walls version is rebuilt from the recorded wall changes,
which is sound because the recorded players are the only ones changing it.
Maps are rebuilt as the checks need them, walking the versions forward
from a copy kept every ``CHECKPOINT_EVERY`` versions, so a long run on a
large map does not hold one map per version; the checks run in version
order, and their findings are reported in the players' order.

Shortest distances come from an A* of the checker's own (the Manhattan
distance never overestimates on a 4-connected grid of unit steps, so it is
exact), not from the game's code; a breadth-first search, ten times slower
on a 200 x 200 map, is kept as the reference the tests compare it with.
"""

from __future__ import annotations

import collections
import heapq
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

Cell = tuple[int, int]
STEPS: tuple[Cell, ...] = ((1, 0), (-1, 0), (0, 1), (0, -1))


@dataclass
class Event:
    """One request and its answer, in the order the player made them."""

    player: int
    action: str
    request: dict | None
    status: int
    answer: Any
    seconds: float
    position: Cell  # where the player stood (by its own history) when it asked


class RecordedPlayer(Protocol):
    id: int
    events: list[Event]
    trajectory: list[Cell]  # the player's cell after 0, 1, 2... successful moves


def bfs_distance(grid: list[list[int]], start: Cell, goal: Cell) -> int | None:
    """Steps on the shortest 4-connected path, or None if there is none."""
    if grid[start[1]][start[0]] or grid[goal[1]][goal[0]]:
        return None
    height, width = len(grid), len(grid[0])
    distance = {start: 0}
    queue = collections.deque([start])
    while queue:
        cell = queue.popleft()
        if cell == goal:
            return distance[cell]
        for dx, dy in STEPS:
            nx, ny = cell[0] + dx, cell[1] + dy
            if 0 <= nx < width and 0 <= ny < height and not grid[ny][nx] \
                    and (nx, ny) not in distance:
                distance[(nx, ny)] = distance[cell] + 1
                queue.append((nx, ny))
    return None


def astar_distance(grid: list[list[int]], start: Cell, goal: Cell) -> int | None:
    """The same as :func:`bfs_distance`, found by A* with the Manhattan distance."""
    if grid[start[1]][start[0]] or grid[goal[1]][goal[0]]:
        return None
    height, width = len(grid), len(grid[0])
    gx, gy = goal
    best = {start: 0}
    frontier = [(abs(start[0] - gx) + abs(start[1] - gy), 0, start)]
    while frontier:
        _, steps, cell = heapq.heappop(frontier)
        if cell == goal:
            return steps
        if steps > best[cell]:
            continue
        for dx, dy in STEPS:
            nx, ny = cell[0] + dx, cell[1] + dy
            if 0 <= nx < width and 0 <= ny < height and not grid[ny][nx] \
                    and steps + 1 < best.get((nx, ny), steps + 2):
                best[(nx, ny)] = steps + 1
                heapq.heappush(frontier, (steps + 1 + abs(nx - gx) + abs(ny - gy), steps + 1,
                                          (nx, ny)))
    return None


#: MapHistory keeps a copy of the map every this many versions.
CHECKPOINT_EVERY = 64


class MapHistory:
    """The map at every walls version, rebuilt from the recorded wall changes.

    ``at(version)`` is cheapest when called in increasing version order: it
    walks forward from the map it built last.
    """

    def __init__(self, initial_grid: list[list[int]], initial_version: int,
                 wall_events: list[Event], violations: list[str]) -> None:
        self.first = initial_version
        by_version: dict[int, Event] = {}
        for event in wall_events:
            version = event.answer.get("walls_version")
            if version in by_version:
                violations.append(f"walls version {version} given to two wall changes "
                                  "(a lost update)")
            by_version[version] = event
        expected = list(range(initial_version + 1, initial_version + 1 + len(by_version)))
        if sorted(by_version) != expected:
            violations.append(f"wall versions are not consecutive: {sorted(by_version)[:10]}...")
        # Each change as (x, y, build), in version order; legality checked
        # on one map walked forward, with a copy kept now and then.
        self.changes: list[tuple[int, int, bool]] = []
        self.checkpoints: list[list[list[int]]] = []
        grid = [list(row) for row in initial_grid]
        for version in sorted(by_version):
            if len(self.changes) % CHECKPOINT_EVERY == 0:
                self.checkpoints.append([list(row) for row in grid])
            event = by_version[version]
            x, y, build = event.request["x"], event.request["y"], event.request["wall"]
            if bool(grid[y][x]) == build:
                violations.append(f"wall change v{version} at ({x}, {y}) was illegal: "
                                  f"the cell {'already had' if build else 'had no'} wall")
            grid[y][x] = 1 if build else 0
            self.changes.append((x, y, build))
        if len(self.changes) % CHECKPOINT_EVERY == 0:
            self.checkpoints.append(grid)
        self.current: list[list[int]] | None = None
        self.current_index = -1   # how many changes self.current has

    def at(self, version: Any) -> list[list[int]] | None:
        """The map at ``version`` (shared: do not change it), None if unknown."""
        if not isinstance(version, int) or not 0 <= version - self.first <= len(self.changes):
            return None
        index = version - self.first
        if self.current is None or not self.current_index <= index:
            checkpoint = index // CHECKPOINT_EVERY
            self.current = [list(row) for row in self.checkpoints[checkpoint]]
            self.current_index = checkpoint * CHECKPOINT_EVERY
        for x, y, build in self.changes[self.current_index:index]:
            self.current[y][x] = 1 if build else 0
        self.current_index = index
        return self.current


def check_path(event: Event, history: MapHistory) -> str | None:
    answer, goal = event.answer, tuple(event.request["to"])
    grid = history.at(answer.get("walls_version"))
    if grid is None:
        return f"path answer with unknown walls version {answer.get('walls_version')}"
    path = answer.get("path")
    shortest = astar_distance(grid, event.position, goal)
    if path is None:
        return None if shortest is None else \
            f"no path from {event.position} to {goal}, but one of {shortest} steps exists"
    cells = [tuple(c) for c in path]
    if cells[0] != event.position or cells[-1] != goal:
        return f"path {cells[0]}..{cells[-1]} does not join {event.position} to {goal}"
    for a, b in zip(cells, cells[1:]):
        if abs(a[0] - b[0]) + abs(a[1] - b[1]) != 1:
            return f"path jumps from {a} to {b}"
    for x, y in cells:
        if grid[y][x]:
            return f"path crosses the wall at ({x}, {y}) of walls version {answer['walls_version']}"
    if len(cells) - 1 != shortest:
        return f"path of {len(cells) - 1} steps where the shortest has {shortest}"
    return None


def check_state(answer: dict, history: MapHistory,
                trajectories: dict[int, list[Cell]]) -> list[str]:
    problems = []
    version = answer.get("walls_version")
    grid = history.at(version)
    if grid is None:
        problems.append(f"state with unknown walls version {version}")
    elif answer["grid"] != grid:
        problems.append(f"state's map differs from walls version {version}")
    seen: dict[Cell, int] = {}
    for p in answer["players"]:
        cell = (p["x"], p["y"])
        if answer["grid"][cell[1]][cell[0]]:
            problems.append(f"player {p['id']} stands in a wall at {cell}")
        if cell in seen:
            problems.append(f"players {seen[cell]} and {p['id']} share the cell {cell}")
        seen[cell] = p["id"]
        trajectory = trajectories.get(p["id"])
        if trajectory is not None:
            if not 0 <= p["moves"] < len(trajectory) or trajectory[p["moves"]] != cell:
                problems.append(f"player {p['id']} shown at {cell} after {p['moves']} moves, "
                                "which its own moves contradict")
    return problems


def check_run(initial: dict, players: Sequence[RecordedPlayer]) -> list[str]:
    """Every rule violation in a finished run (empty when all held)."""
    violations: list[str] = []
    events = [e for p in players for e in p.events]
    for e in events:
        if e.status >= 500 or e.status == 400 or e.status not in (200, 409):
            violations.append(f"{e.action} {e.request} got {e.status}: {e.answer!r:.200}")
    ok = [e for e in events if e.status == 200 and isinstance(e.answer, dict)]
    history = MapHistory(initial["grid"], initial["walls_version"],
                         [e for e in ok if e.action == "wall"], violations)
    trajectories = {p.id: p.trajectory for p in players}
    # Findings by (player's index, event's index), so that they come out
    # in the players' order although the map checks run in version order.
    found: dict[tuple[int, int], list[str]] = collections.defaultdict(list)
    map_checks: list[tuple[Any, tuple[int, int], int, Event]] = []
    for i, p in enumerate(players):
        moves = 0
        for j, e in enumerate(p.events):
            if e.status != 200 or not isinstance(e.answer, dict):
                continue
            if e.action in ("path", "state"):
                version = e.answer.get("walls_version")
                map_checks.append((version if isinstance(version, int) else -1, (i, j),
                                   p.id, e))
            elif e.action == "move":
                moves += 1
                moved = e.answer["player"]
                target = (moved["x"], moved["y"])
                if target != (e.request["x"], e.request["y"]) or moved["moves"] != moves:
                    found[i, j].append(f"player {p.id}: move answer {moved} does not match "
                                       f"the request {e.request} and move count {moves}")
                if abs(target[0] - e.position[0]) + abs(target[1] - e.position[1]) != 1:
                    found[i, j].append(f"player {p.id}: moved from {e.position} to {target}")
    map_checks.sort(key=lambda check: (check[0], check[1]))
    for _, where, player_id, e in map_checks:
        if e.action == "path":
            problem = check_path(e, history)
            if problem:
                found[where].append(f"player {player_id}: {problem}")
        else:
            found[where].extend(f"player {player_id}'s view: {problem}"
                                for problem in check_state(e.answer, history, trajectories))
    for where in sorted(found):
        violations.extend(found[where])
    return violations
