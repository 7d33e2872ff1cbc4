"""``bench_astar``: simulated players load the A-star game and check its rules.

Each simulated player is a thread with its own keep-alive HTTP connection
that joins the game, then loops over a fixed mix of actions until the time
or the action budget runs out, and leaves. Two mixes:

``light`` (the default; the game as people play it)

=========  =====  ================================================
move        50 %  one step in a random direction
path        25 %  shortest path to a random cell anywhere on the map
state       10 %  the whole map and every player
build        8 %  a wall on a random cell within 3 steps
destroy      7 %  a wall seen in the last state within 3 steps
=========  =====  ================================================

``search`` (shaped like the 2014 PyPy-STM benchmark: most of the work in
long A* searches over a large shared map; serve the game with a large map,
``apps.astar_large``)

=========  =====  ================================================
path        75 %  shortest path to a far cell: at least a third of the
                  map's width + height away, not a wall the player knows of
move        12 %  one step in a random direction
build        5 %  a wall on a random cell within 3 steps
destroy      5 %  a wall seen within 3 steps
state        3 %  the whole map and every player
=========  =====  ================================================

In the search mix players know the map they joined (the run's first state),
so they aim at free cells and destroy walls that exist.

Every answer is recorded, and afterwards the whole run is checked against
the game's rules (``bench.astar_rules.check_run``: paths, moves, wall
versions, states; server errors and 400s count too). Any violation fails
the run (exit status 1).

Run it: ``python -m bench.bench_astar http://127.0.0.1:8888 --players 16 --duration 10``
(``--prefix /astar`` when the game is served under the demo app,
``--mix search`` for the search-heavy mix).
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import random
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from bench.astar_rules import STEPS, Cell, Event, check_run
from bench.loadgen import percentile

log = logging.getLogger("bench_astar")

WALL_RADIUS = 3


@dataclass(frozen=True)
class Mix:
    """What the simulated players do: (action, weight in percent), and their path goals."""

    name: str
    weights: tuple[tuple[str, int], ...]
    #: Goals far away (see the module docstring) instead of anywhere, and
    #: players that start knowing the map.
    far_goals: bool = False


MIXES = {
    "light": Mix("light", (("move", 50), ("path", 25), ("state", 10), ("build", 8),
                           ("destroy", 7))),
    "search": Mix("search", (("path", 75), ("move", 12), ("build", 5), ("destroy", 5),
                             ("state", 3)), far_goals=True),
}
#: The light mix's weights, under their old name.
MIX = MIXES["light"].weights
#: Tries at drawing a far goal before taking the farthest one drawn.
FAR_GOAL_TRIES = 50


# -- talking to the server ----------------------------------------------------

class GameClient:
    """One keep-alive connection to the game's JSON API."""

    def __init__(self, base_url: str, prefix: str = "", timeout: float = 60.0) -> None:
        parts = urllib.parse.urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.prefix = prefix.rstrip("/")
        self.timeout = timeout
        self.connection: http.client.HTTPConnection | None = None

    def call(self, endpoint: str, body: dict | None = None) -> tuple[int, Any, float]:
        """(status, decoded JSON or the raw text, seconds taken) of one request."""
        method = "GET" if body is None else "POST"
        payload = None if body is None else json.dumps(body).encode()
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port,
                                                             timeout=self.timeout)
            started = time.perf_counter()
            try:
                self.connection.request(method, f"{self.prefix}/api/{endpoint}", payload,
                                        {"Content-Type": "application/json"})
                response = self.connection.getresponse()
                raw = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A keep-alive connection the server closed between requests:
                # reconnect once. Only safe because it never got to the server.
                self.close()
                if attempt == 2:
                    raise
                continue
            elapsed = time.perf_counter() - started
            try:
                answer: Any = json.loads(raw)
            except ValueError:
                answer = raw.decode(errors="replace")
            return response.status, answer, elapsed
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


# -- one simulated player -----------------------------------------------------

@dataclass
class SimulatedPlayer:
    id: int
    start: Cell
    rng: random.Random
    width: int
    height: int
    mix: Mix = MIXES["light"]
    position: Cell = (0, 0)
    trajectory: list[Cell] = field(default_factory=list)  # position after k moves
    events: list[Event] = field(default_factory=list)
    seen_walls: set[Cell] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.position = self.start
        self.trajectory = [self.start]

    def near(self, radius: int) -> Cell:
        x, y = self.position
        return (min(self.width - 1, max(0, x + self.rng.randint(-radius, radius))),
                min(self.height - 1, max(0, y + self.rng.randint(-radius, radius))))

    def far_goal(self) -> Cell:
        """A cell at least a third of width + height away, not a wall we know of."""
        far = (self.width + self.height) // 3
        best, best_distance = self.position, -1
        for _ in range(FAR_GOAL_TRIES):
            cell = (self.rng.randrange(self.width), self.rng.randrange(self.height))
            if cell in self.seen_walls:
                continue
            distance = abs(cell[0] - self.position[0]) + abs(cell[1] - self.position[1])
            if distance >= far:
                return cell
            if distance > best_distance:
                best, best_distance = cell, distance
        return best

    def next_request(self, action: str) -> tuple[str, dict | None]:
        if action == "move":
            dx, dy = self.rng.choice(STEPS)
            x, y = self.position[0] + dx, self.position[1] + dy
            if not (0 <= x < self.width and 0 <= y < self.height):
                x, y = self.position[0] - dx, self.position[1] - dy
            return "move", {"player": self.id, "x": x, "y": y}
        if action == "path":
            goal = self.far_goal() if self.mix.far_goals else \
                (self.rng.randrange(self.width), self.rng.randrange(self.height))
            return "path", {"player": self.id, "to": list(goal)}
        if action == "state":
            return "state", None
        if action == "build":
            x, y = self.near(WALL_RADIUS)
            return "wall", {"player": self.id, "x": x, "y": y, "wall": True}
        px, py = self.position
        nearby = [c for c in self.seen_walls
                  if abs(c[0] - px) <= WALL_RADIUS and abs(c[1] - py) <= WALL_RADIUS]
        x, y = self.rng.choice(sorted(nearby)) if nearby else self.near(WALL_RADIUS)
        return "wall", {"player": self.id, "x": x, "y": y, "wall": False}

    def play(self, client: GameClient, deadline: float, max_actions: int,
             failures: list[str]) -> None:
        actions = [a for a, _ in self.mix.weights]
        weights = [w for _, w in self.mix.weights]
        try:
            for _ in range(max_actions):
                if time.monotonic() >= deadline:
                    break
                action = self.rng.choices(actions, weights)[0]
                endpoint, body = self.next_request(action)
                status, answer, seconds = client.call(endpoint, body)
                self.events.append(Event(self.id, endpoint, body, status, answer, seconds,
                                         self.position))
                if endpoint == "move" and status == 200 and isinstance(answer, dict):
                    moved = answer.get("player", {})
                    self.position = (moved.get("x"), moved.get("y"))
                    self.trajectory.append(self.position)
                elif endpoint == "state" and status == 200 and isinstance(answer, dict):
                    self.seen_walls = {(x, y) for y, row in enumerate(answer["grid"])
                                       for x, v in enumerate(row) if v}
        except Exception as exc:  # a dead connection ends this player, loudly
            failures.append(f"player {self.id}: {type(exc).__name__}: {exc}")
        finally:
            client.close()


# -- running and summarising --------------------------------------------------

@dataclass
class RunResult:
    requests: int
    seconds: float
    latencies: list[float]
    by_action: dict[str, dict[int, int]]
    violations: list[str]
    failures: list[str]
    mix: str = "light"

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, fraction: float) -> float | None:
        return percentile(sorted(self.latencies), fraction)

    def summary(self) -> dict:
        p50, p99 = self.percentile(0.50), self.percentile(0.99)
        return {
            "mix": self.mix,
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "requests_per_second": round(self.requests_per_second, 2),
            "p50_ms": None if p50 is None else round(p50 * 1000, 2),
            "p99_ms": None if p99 is None else round(p99 * 1000, 2),
            "statuses_by_action": self.by_action,
            "violations": len(self.violations),
            "violation_examples": self.violations[:10],
            "client_failures": self.failures,
        }


def run_players(base_url: str, *, players: int = 16, duration: float = 10.0,
                max_actions: int = 10**9, prefix: str = "", seed: int = 1,
                mix: str | Mix = "light") -> RunResult:
    """Join ``players`` players, play until ``duration`` or ``max_actions`` each, leave, check.

    ``mix``: a name of ``MIXES`` or a ``Mix``.
    """
    mix = MIXES[mix] if isinstance(mix, str) else mix
    setup = GameClient(base_url, prefix)
    try:
        joined = []
        for i in range(players):
            status, answer, _ = setup.call("join", {"name": f"bot{i}"})
            if status != 200:
                raise RuntimeError(f"could not join the game: {status} {answer!r:.200}")
            joined.append(answer["player"])
        status, initial, _ = setup.call("state")
        if status != 200:
            raise RuntimeError(f"could not read the game's state: {status} {initial!r:.200}")
    finally:
        setup.close()
    width, height = initial["width"], initial["height"]
    simulated = [SimulatedPlayer(p["id"], (p["x"], p["y"]), random.Random(seed * 1000 + i),
                                 width, height, mix) for i, p in enumerate(joined)]
    if mix.far_goals:
        known = {(x, y) for y, row in enumerate(initial["grid"]) for x, v in enumerate(row) if v}
        for player in simulated:
            player.seen_walls = set(known)
    failures: list[str] = []
    started = time.monotonic()
    deadline = started + duration
    threads = [threading.Thread(target=p.play, name=f"player-{p.id}",
                                args=(GameClient(base_url, prefix), deadline, max_actions,
                                      failures))
               for p in simulated]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    leave(base_url, prefix, [p.id for p in simulated])
    events = [e for p in simulated for e in p.events]
    by_action: dict[str, dict[int, int]] = {}
    for e in events:
        counts = by_action.setdefault(e.action, {})
        counts[e.status] = counts.get(e.status, 0) + 1
    return RunResult(len(events), elapsed, [e.seconds for e in events], by_action,
                     check_run(initial, simulated), failures, mix.name)


def leave(base_url: str, prefix: str, player_ids: list[int]) -> None:
    """The players leave, making room for the next run (best effort: not checked)."""
    client = GameClient(base_url, prefix)
    try:
        for player_id in player_ids:
            client.call("leave", {"player": player_id})
    except OSError as exc:
        log.warning("players could not leave: %s", exc)
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Simulated players load the A-star game and check its rules on "
        "every answer; exits 1 on any violation.")
    parser.add_argument("url", help="the server, e.g. http://127.0.0.1:8888")
    parser.add_argument("--prefix", default="", help="where the game is mounted (e.g. /astar)")
    parser.add_argument("--players", type=int, default=16, help="concurrent players (default 16)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds (default 10)")
    parser.add_argument("--max-actions", type=int, default=10**9,
                        help="stop each player after this many actions")
    parser.add_argument("--seed", type=int, default=1, help="seed of the players' choices")
    parser.add_argument("--mix", choices=sorted(MIXES), default="light",
                        help="light: the game as played (default); search: long searches "
                        "for far goals, for a large map")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    result = run_players(args.url, players=args.players, duration=args.duration,
                         max_actions=args.max_actions, prefix=args.prefix, seed=args.seed,
                         mix=args.mix)
    summary = result.summary()
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['requests']} requests in {summary['seconds']}s: "
              f"{summary['requests_per_second']} req/s, p50 {summary['p50_ms']} ms, "
              f"p99 {summary['p99_ms']} ms, {summary['violations']} rule violations")
        for line in result.violations[:10] + result.failures:
            print("  " + line)
    return 1 if result.violations or result.failures else 0


if __name__ == "__main__":
    sys.exit(main())
