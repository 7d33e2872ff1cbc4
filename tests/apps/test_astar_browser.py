"""The game page in headless Chromium: it draws the map, a click builds a wall, keys move.

A screenshot (read with Pillow) shows the map and the player's own marker;
a page that finds the game full still draws it and joins when a place
frees; a page that goes away takes its player with it.
"""

from __future__ import annotations

import asyncio
import base64
import io
import math
import os

import pytest
from PIL import Image

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


#: The own marker's ring (game.js ME_HALO), a colour nothing else is drawn in.
ME_HALO = (255, 0, 255)
WALL = (0x33, 0x33, 0x33)


def pixel_at(x: int, y: int) -> str:
    return (f'Array.from(document.getElementById("map").getContext("2d")'
            f'.getImageData({x}, {y}, 1, 1).data.slice(0, 3))')


async def canvas_screenshot(tools: DevTools) -> Image.Image:
    """What the screen shows of the canvas, as an RGB image (one pixel per CSS pixel)."""
    # The canvas's own pixels, inside its border.
    box = await tools.evaluate('(() => { const c = document.getElementById("map"), '
                               'b = c.getBoundingClientRect(); return [b.left + c.clientLeft, '
                               'b.top + c.clientTop, c.clientWidth, c.clientHeight]; })()')
    shot = await tools.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                            clip={"x": box[0], "y": box[1], "width": box[2], "height": box[3],
                                  "scale": 1})
    image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
    if os.environ.get("ASTAR_SCREENSHOT"):  # for a person to look at
        image.save(os.environ["ASTAR_SCREENSHOT"])
    return image


def own_marker_pixels(image: Image.Image, center: tuple[float, float],
                      radius: float) -> tuple[int, int]:
    """(ring-coloured pixels within ``radius`` of ``center``, those farther away)."""
    total = next((n for n, rgb in image.getcolors(maxcolors=1 << 16) if rgb == ME_HALO), 0)
    pixels = image.load()
    near = sum(1 for y in range(max(0, int(center[1] - radius)),
                                min(image.height, int(center[1] + radius) + 1))
               for x in range(max(0, int(center[0] - radius)),
                              min(image.width, int(center[0] + radius) + 1))
               if pixels[x, y] == ME_HALO and math.hypot(x - center[0], y - center[1]) <= radius)
    return near, total - near


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
        # Players, paths and the own marker's ring (radius 2 cells, at least
        # 12 px, ringed in black) cover a few cells; the rest must match exactly.
        ring = math.pi * (2.2 * max(12, 2 * cell)) ** 2
        covered = 4 * len(state["players"]) * cell * cell + int(ring)
        assert abs(pixels["wall"] - walls * cell * cell) <= covered
        free_cells = state["width"] * state["height"] - walls
        assert abs(pixels["free"] - free_cells * cell * cell) <= covered + pixels["other"]
        assert pixels["other"] > 0  # the players' discs

        # The screen shows the same map, and the own marker where the player is.
        me = next(p for p in state["players"] if p["id"] == browser_players[0]["id"])
        image = await canvas_screenshot(tools)
        assert image.size == (pixels["width"], pixels["height"])
        colours = image.getcolors(maxcolors=1 << 16)
        wall_pixels = next((n for n, rgb in colours if rgb == WALL), 0)
        assert abs(wall_pixels - walls * cell * cell) <= covered
        near, far = own_marker_pixels(image, ((me["x"] + 0.5) * cell, (me["y"] + 0.5) * cell),
                                      radius=3 * max(12, 2 * cell))
        # A ring of 20 px radius and 4 px width: about 500 pixels, and none elsewhere.
        assert near >= 200 and far == 0, (near, far)

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
    finally:
        tools.close()


def test_a_full_game_is_drawn_at_once_joined_when_a_place_frees_and_left_on_close(
        demo_server) -> None:
    game = f"{demo_server.url}/astar"
    state = fetch(game + "/api/state")[2]
    # Fill the game (100 players) as 100 closed pages used to, for good.
    fillers = []
    while True:
        status, _, answer = fetch(game + "/api/join", {"name": "filler"})
        if status != 200:
            assert status == 409 and "full" in answer["error"]
            break
        fillers.append(answer["player"]["id"])
    browser = Chromium(game + "/")
    try:
        asyncio.run(watch_then_join_then_close(game, browser, fillers, state))
    finally:
        browser.stop()
        for player_id in fillers:
            fetch(game + "/api/leave", {"player": player_id})


async def watch_then_join_then_close(game: str, browser: Chromium, fillers: list[int],
                                     state: dict) -> None:
    tools = await DevTools.connect(browser.page_websocket_url())
    try:
        # The map is drawn although the page could not join.
        await tools.wait_for('document.getElementById("status")?.textContent'
                             '?.includes("full")')
        pixels = await tools.evaluate(COUNT_PIXELS)
        cell = pixels["cell"]
        walls = sum(map(sum, state["grid"]))
        assert walls * cell * cell * 0.5 < pixels["wall"] <= walls * cell * cell
        assert "you are player" not in await tools.evaluate(
            'document.getElementById("players").textContent')

        # A filler leaves: the page takes its place (it retries every 5 s).
        fetch(game + "/api/leave", {"player": fillers.pop()})
        await tools.wait_for('document.getElementById("players")?.textContent'
                             '?.includes("you are player")')
        me = int(await tools.evaluate('document.getElementById("map").dataset.me'))
        assert me in {p["id"] for p in fetch(game + "/api/state")[2]["players"]}

        # The page goes away: its player leaves the game.
        await tools.send("Page.navigate", url="about:blank")
        for _ in range(200):
            if me not in {p["id"] for p in fetch(game + "/api/state")[2]["players"]}:
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail(f"player {me} stayed in the game after its page closed")
    finally:
        tools.close()
