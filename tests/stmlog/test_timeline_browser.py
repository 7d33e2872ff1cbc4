"""The timeline page opened in real headless Chromium: the lanes are in the DOM and drawn."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from PIL import Image

from stmlog_tools.timeline import CATEGORIES, LANE_HEIGHT, write_timeline
from tests.apps.chromium import CHROMIUM_FLAGS, chromium_path
from tests.stmlog.conftest import write_c8
from tests.stmlog.test_analysis import CORE

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(chromium_path() is None, reason="needs Debian's chromium")]

COLOURS = {name: tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5)) for name, colour in CATEGORIES}


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="stmlog-chromium-") as profile:
        return subprocess.run([chromium_path() or "chromium", *CHROMIUM_FLAGS,
                               f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=120)


def bands(image: Image.Image, colour: tuple[int, int, int]) -> list[tuple[int, int]]:
    """Vertical ranges of rows holding a few pixels of exactly ``colour``, lane-sized.

    Bands lower than half a lane are left out: the legend's swatches.
    """
    rgb = image.convert("RGB")
    width, height = rgb.size
    pixels = rgb.load()
    rows = [y for y in range(height)
            if sum(pixels[x, y] == colour for x in range(0, width, 2)) >= 3]
    found: list[tuple[int, int]] = []
    for y in rows:
        if found and y == found[-1][1] + 1:
            found[-1] = (found[-1][0], y)
        else:
            found.append((y, y))
    return [(top, bottom) for top, bottom in found if bottom - top >= LANE_HEIGHT // 2]


def test_timeline_renders_one_lane_per_thread(tmp_path: Path) -> None:
    log = write_c8(tmp_path / "core.log", CORE)
    page = tmp_path / "timeline.html"
    assert write_timeline(str(log), str(page)) == 3

    dom = chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    for thread in (1, 2, 3):
        assert f'class="lane" data-thread="{thread}"' in dom.stdout

    shot = tmp_path / "shot.png"
    result = chromium(f"--screenshot={shot}", "--window-size=1200,400", page.as_uri())
    assert shot.exists(), result.stderr
    image = Image.open(shot)
    # Every thread committed something: three separate green bands, one per lane.
    committed = bands(image, COLOURS["committed"])
    assert len(committed) == 3, committed
    # Only thread 3 aborted: one red band, inside the third lane.
    (aborted,) = bands(image, COLOURS["aborted"])
    assert committed[2][0] - 2 <= aborted[0] and aborted[1] <= committed[2][1] + 2
    # Thread 1 and 2 ran inevitably (blue); paused time (grey) shows for threads 2 and 3.
    assert len(bands(image, COLOURS["inevitable"])) == 2
    assert len(bands(image, COLOURS["paused"])) >= 2
