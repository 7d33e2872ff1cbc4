"""The game page in headless Chromium: it draws the map, a click builds a wall, keys move."""

from __future__ import annotations

import asyncio
import base64
import os

import pytest

from tests.apps.chromium import Chromium, DevTools, chromium_path
from tests.apps.http_helpers import fetch

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed")]

#: Counts of canvas pixels by colour: the page paints walls #333333 on white.
COUNT_PIXELS = """(() => {
  const c = document.getElementById("map");
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let wall = 0, free = 0, other = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i] === 0x33 && d[i + 1] === 0x33 && d[i + 2] === 0x33) wall++;
    else if (d[i] === 255 && d[i + 1] === 255 && d[i + 2] === 255) free++;
    else other++;
  }
  return {wall, free, other, width: c.width, height: c.height,
          cell: Number(c.dataset.cellSize)};
})()"""


def pixel_at(x: int, y: int) -> str:
    return (f'Array.from(document.getElementById("map").getContext("2d")'
            f'.getImageData({x}, {y}, 1, 1).data.slice(0, 3))')


def test_page_draws_the_map_a_click_builds_a_wall_and_keys_move(demo_server, tmp_path) -> None:
    game = f"{demo_server.url}/astar"
    browser = Chromium(game + "/")
    try:
        asyncio.run(play_in_the_page(game, browser, tmp_path))
    finally:
        browser.stop()


async def play_in_the_page(game: str, browser: Chromium, tmp_path) -> None:
    tools = await DevTools.connect(browser.page_websocket_url())
    try:
        await tools.wait_for('document.getElementById("players")?.textContent'
                             '?.includes("you are player")')
        state = fetch(game + "/api/state")[2]
        browser_players = [p for p in state["players"] if p["name"] == "browser"]
        assert browser_players, "the page joined the game as a player"

        # The canvas shows the server's map: one cell per grid entry, walls dark.
        pixels = await tools.evaluate(COUNT_PIXELS)
        cell = pixels["cell"]
        assert (pixels["width"], pixels["height"]) == (state["width"] * cell,
                                                       state["height"] * cell)
        walls = sum(map(sum, state["grid"]))
        # Players and paths cover a few cells; the rest must match exactly.
        covered = 4 * len(state["players"]) * cell * cell
        assert abs(pixels["wall"] - walls * cell * cell) <= covered
        free_cells = state["width"] * state["height"] - walls
        assert abs(pixels["free"] - free_cells * cell * cell) <= covered + pixels["other"]
        assert pixels["other"] > 0  # the players' discs

        # Click a free cell far from every player: the server gets a wall there.
        occupied = {(p["x"], p["y"]) for p in state["players"]}
        x, y = next((x, y) for y, row in enumerate(state["grid"]) for x, v in enumerate(row)
                    if not v and all(abs(x - px) + abs(y - py) > 2 for px, py in occupied))
        box = await tools.evaluate('(() => { const b = document.getElementById("map")'
                                   '.getBoundingClientRect(); return [b.left, b.top]; })()')
        await tools.click(box[0] + (x + 0.5) * cell, box[1] + (y + 0.5) * cell)
        for _ in range(100):
            if fetch(game + "/api/state")[2]["grid"][y][x]:
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail(f"clicking cell ({x}, {y}) did not build a wall")
        # ... and the page redraws that cell as a wall.
        center = (int((x + 0.5) * cell), int((y + 0.5) * cell))
        await tools.wait_for(f"{pixel_at(*center)}.every(v => v === 0x33)")
        assert "built a wall" in await tools.evaluate(
            'document.getElementById("status").textContent')

        # An arrow key moves the page's player to a free neighbouring cell.
        state = fetch(game + "/api/state")[2]
        me = next(p for p in state["players"] if p["id"] == browser_players[0]["id"])
        occupied = {(p["x"], p["y"]) for p in state["players"]}
        arrows = {"ArrowRight": (1, 0, 39), "ArrowLeft": (-1, 0, 37),
                  "ArrowDown": (0, 1, 40), "ArrowUp": (0, -1, 38)}
        free = [(key, me["x"] + dx, me["y"] + dy, code) for key, (dx, dy, code) in arrows.items()
                if 0 <= me["x"] + dx < state["width"] and 0 <= me["y"] + dy < state["height"]
                and not state["grid"][me["y"] + dy][me["x"] + dx]
                and (me["x"] + dx, me["y"] + dy) not in occupied]
        assert free, "on the default map the first player's cell has a free neighbour"
        key, tx, ty, code = free[0]
        await tools.press(key, code)
        for _ in range(100):
            moved = next(p for p in fetch(game + "/api/state")[2]["players"]
                         if p["id"] == me["id"])
            if (moved["x"], moved["y"]) == (tx, ty):
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail(f"{key} did not move the player from ({me['x']}, {me['y']})")

        if os.environ.get("ASTAR_SCREENSHOT"):  # for a person to look at
            shot = await tools.send("Page.captureScreenshot", format="png")
            with open(os.environ["ASTAR_SCREENSHOT"], "wb") as f:
                f.write(base64.b64decode(shot["data"]))
    finally:
        tools.close()
