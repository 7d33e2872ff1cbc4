"""The A-star game's rules and state, with no HTTP in sight.

A map is a plain list of rows, each a list of ints (``FREE`` or ``WALL``).
Players join, move one cell at a time, build and destroy walls, and ask for
the shortest path between two cells (A*, 4-connected, unit steps). The rules
that always hold:

* a player never stands in a wall, and two players never share a cell;
* a returned path starts and ends where asked, moves one cell at a time
  (4-connected), and crosses no wall that existed when it was computed.

``walls_version`` counts wall changes: each build or destroy gets the next
number, and every answer that depends on the walls says which version it
saw, so a client can replay the wall changes and check those answers.

Players who stop playing do not stay forever: a player not seen (no action,
no ``touch``) for ``idle_timeout`` seconds expires, and expired players are
removed whenever someone joins or reads the whole state. Otherwise the
``max_players`` limit would fill up with the ghosts of closed pages and
finished benchmark runs, and lock the game for everyone.

Requests the game refuses in the current state raise ``Refused``; requests
that are wrong whatever the state (a cell off the map, an unknown player)
raise ``BadRequest``. This module is plain single-threaded Python: no locks.
"""

from __future__ import annotations

import heapq
import random
import time
from dataclasses import dataclass
from typing import Callable

FREE = 0
WALL = 1

Cell = tuple[int, int]

#: The four moves a player (and a path) can make.
STEPS: tuple[Cell, ...] = ((1, 0), (-1, 0), (0, 1), (0, -1))


class BadRequest(ValueError):
    """Wrong whatever the game's state: the reason is for the client."""


class Refused(Exception):
    """Well-formed, but the game's rules refuse it right now."""


@dataclass
class Player:
    id: int
    name: str
    x: int
    y: int
    moves: int = 0  # successful moves so far, so clients can order positions
    last_seen: float = 0.0  # the game's clock when the player last acted or said it is there

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "x": self.x, "y": self.y,
                "moves": self.moves}


def random_grid(width: int, height: int, wall_density: float, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[WALL if rng.random() < wall_density else FREE for _ in range(width)]
            for _ in range(height)]


def shortest_path(grid: list[list[int]], start: Cell, goal: Cell) -> list[Cell] | None:
    """A* with the Manhattan distance; None when the goal cannot be reached."""
    height, width = len(grid), len(grid[0])
    gx, gy = goal
    if grid[start[1]][start[0]] == WALL or grid[gy][gx] == WALL:
        return None
    came_from: dict[Cell, Cell | None] = {start: None}
    cost_to: dict[Cell, int] = {start: 0}
    # (estimated total, -cost so far, cell): among equal estimates, expand
    # the cell furthest along first, which keeps the frontier small.
    frontier = [(abs(start[0] - gx) + abs(start[1] - gy), 0, start)]
    while frontier:
        _, neg_cost, cell = heapq.heappop(frontier)
        if cell == goal:
            path = [cell]
            while came_from[path[-1]] is not None:
                path.append(came_from[path[-1]])
            path.reverse()
            return path
        cost = -neg_cost
        if cost > cost_to[cell]:
            continue  # a stale entry: a shorter way here was found since
        x, y = cell
        for dx, dy in STEPS:
            nx, ny = x + dx, y + dy
            if 0 <= nx < width and 0 <= ny < height and grid[ny][nx] != WALL:
                next_cost = cost + 1
                if next_cost < cost_to.get((nx, ny), next_cost + 1):
                    cost_to[(nx, ny)] = next_cost
                    came_from[(nx, ny)] = cell
                    estimate = next_cost + abs(nx - gx) + abs(ny - gy)
                    heapq.heappush(frontier, (estimate, -next_cost, (nx, ny)))
    return None


class Game:
    """One shared map and its players.

    ``clock`` gives the time in seconds (``time.monotonic`` by default; tests
    pass their own); ``idle_timeout`` is how long a player may go unseen.
    """

    def __init__(self, width: int = 96, height: int = 64, wall_density: float = 0.2,
                 seed: int = 2014, max_players: int = 100, idle_timeout: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if width < 2 or height < 2:
            raise ValueError("the map needs at least 2 x 2 cells")
        if idle_timeout <= 0:
            raise ValueError("idle_timeout must be positive")
        self.width = width
        self.height = height
        self.max_players = max_players
        self.idle_timeout = idle_timeout
        # A player's last_seen is refreshed at most this often: most actions
        # then only read it, and players acting at once do not all write.
        self.touch_every = min(5.0, idle_timeout / 4)
        self.clock = clock
        self.grid = random_grid(width, height, wall_density, seed)
        self.walls_version = 0
        self.players: dict[int, Player] = {}
        self.occupant: dict[Cell, int] = {}   # cell -> id of the player on it
        self.paths: dict[int, list[Cell]] = {}  # player id -> the last path asked
        self.next_player_id = 1

    # -- checks shared by the actions ------------------------------------

    def check_cell(self, x: int, y: int) -> Cell:
        if not 0 <= x < self.width:
            raise BadRequest(f"x={x} is off the map (0..{self.width - 1})")
        if not 0 <= y < self.height:
            raise BadRequest(f"y={y} is off the map (0..{self.height - 1})")
        return (x, y)

    def player(self, player_id: int) -> Player:
        try:
            return self.players[player_id]
        except KeyError:
            raise BadRequest(f"unknown player {player_id}") from None

    def acting_player(self, player_id: int) -> Player:
        """The player, now seen acting (which keeps it from expiring)."""
        player = self.player(player_id)
        now = self.clock()
        if now - player.last_seen >= self.touch_every:
            player.last_seen = now
        return player

    # -- presence ---------------------------------------------------------

    def touch(self, player_id: int) -> None:
        """The player is still there (its page is open) though it does nothing."""
        self.acting_player(player_id)

    def expire_idle(self) -> list[int]:
        """Remove the players unseen for ``idle_timeout`` seconds; their ids."""
        deadline = self.clock() - self.idle_timeout
        expired = [p.id for p in self.players.values() if p.last_seen < deadline]
        for player_id in expired:
            self.leave(player_id)
        return expired

    # -- actions ----------------------------------------------------------

    def join(self, name: str) -> Player:
        self.expire_idle()
        if len(self.players) >= self.max_players:
            raise Refused(f"the game is full ({self.max_players} players)")
        player_id = self.next_player_id
        cells = self.width * self.height
        # Start the search for a free cell at a spot that depends on the
        # id, so that players spread over the map without a random source.
        first = (player_id * 7919) % cells
        for offset in range(cells):
            index = (first + offset) % cells
            x, y = index % self.width, index // self.width
            if self.grid[y][x] == FREE and (x, y) not in self.occupant:
                break
        else:
            raise Refused("no free cell left on the map")
        self.next_player_id = player_id + 1
        player = Player(player_id, name, x, y, last_seen=self.clock())
        self.players[player_id] = player
        self.occupant[(x, y)] = player_id
        return player

    def leave(self, player_id: int) -> None:
        player = self.player(player_id)
        del self.occupant[(player.x, player.y)]
        del self.players[player_id]
        self.paths.pop(player_id, None)

    def move(self, player_id: int, x: int, y: int) -> Player:
        player = self.acting_player(player_id)
        target = self.check_cell(x, y)
        if abs(x - player.x) + abs(y - player.y) != 1:
            raise Refused(f"({x}, {y}) is not next to ({player.x}, {player.y})")
        if self.grid[y][x] == WALL:
            raise Refused(f"a wall stands at ({x}, {y})")
        if target in self.occupant:
            raise Refused(f"player {self.occupant[target]} stands at ({x}, {y})")
        del self.occupant[(player.x, player.y)]
        self.occupant[target] = player_id
        player.x, player.y = x, y
        player.moves += 1
        return player

    def set_wall(self, player_id: int, x: int, y: int, wall: bool) -> int:
        """Build (wall=True) or destroy a wall; returns the new walls version."""
        self.acting_player(player_id)
        target = self.check_cell(x, y)
        row = self.grid[y]
        if wall:
            if row[x] == WALL:
                raise Refused(f"a wall already stands at ({x}, {y})")
            if target in self.occupant:
                raise Refused(f"player {self.occupant[target]} stands at ({x}, {y})")
        elif row[x] != WALL:
            raise Refused(f"there is no wall at ({x}, {y})")
        row[x] = WALL if wall else FREE
        self.walls_version += 1
        return self.walls_version

    def ask_path(self, player_id: int, goal: Cell, start: Cell | None = None
                 ) -> tuple[list[Cell] | None, int]:
        """The shortest path (None if there is none) and the walls version it saw.

        It starts at the player's cell unless ``start`` is given, and is kept
        as the player's last path (the page draws it).
        """
        player = self.acting_player(player_id)
        goal = self.check_cell(*goal)
        start = (player.x, player.y) if start is None else self.check_cell(*start)
        path = shortest_path(self.grid, start, goal)
        if path is None:
            self.paths.pop(player_id, None)
        else:
            self.paths[player_id] = path
        return path, self.walls_version

    def snapshot(self, grid: bool = True) -> dict:
        """Everything a client draws, as fresh JSON-ready objects.

        Idle players expire first, so a snapshot never shows them. Without
        ``grid`` the map itself is left out (a client that has the map of
        this ``walls_version`` needs only the rest).
        """
        self.expire_idle()
        state = {
            "width": self.width,
            "height": self.height,
            "walls_version": self.walls_version,
            "players": [p.to_json() for p in self.players.values()],
            "paths": {str(pid): [list(c) for c in path] for pid, path in self.paths.items()},
        }
        if grid:
            state["grid"] = [list(row) for row in self.grid]
        return state
