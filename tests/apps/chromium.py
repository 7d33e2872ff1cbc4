"""Headless Chromium driven through the DevTools protocol, for the page tests.

``Chromium`` starts the browser on a fresh profile with a page open;
``DevTools`` sends protocol commands to that page over its websocket (with
Tornado's websocket client) and waits for their answers.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from typing import Any

from tornado.websocket import WebSocketClientConnection, websocket_connect

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync",
                  "--window-size=1200,900"]


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    """A headless Chromium with one page open at ``url``; stop() ends it."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        self.profile = tempfile.mkdtemp(prefix="astar-chromium-")
        self.process = subprocess.Popen(
            [chromium_path() or "chromium", *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}",
             "--remote-debugging-port=0", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.port = self._devtools_port(timeout)

    def _devtools_port(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        assert self.process.stderr is not None
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.process.returncode}")
            found = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if found:
                return int(found.group(1))
        raise RuntimeError("chromium did not open its DevTools port")

    def page_websocket_url(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=10) as r:
            targets = json.load(r)
        return next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        shutil.rmtree(self.profile, ignore_errors=True)


class DevTools:
    """Protocol commands to one page: ``await tools.send("Page.navigate", url=...)``."""

    def __init__(self, connection: WebSocketClientConnection) -> None:
        self.connection = connection
        self.ids = itertools.count(1)

    @classmethod
    async def connect(cls, websocket_url: str) -> "DevTools":
        return cls(await websocket_connect(websocket_url, max_message_size=64 << 20))

    async def send(self, method: str, **params: Any) -> dict:
        message_id = next(self.ids)
        await self.connection.write_message(json.dumps(
            {"id": message_id, "method": method, "params": params}))
        while True:  # events may arrive before our answer: skip them
            raw = await asyncio.wait_for(self.connection.read_message(), 30)
            if raw is None:
                raise RuntimeError("the DevTools connection closed")
            message = json.loads(raw)
            if message.get("id") == message_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    async def evaluate(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", expression=expression,
                                 returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page error: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 20.0) -> Any:
        """Evaluate until the value is truthy; returns it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = await self.evaluate(expression)
            if value:
                return value
            await asyncio.sleep(0.1)
        raise TimeoutError(f"still false after {timeout}s: {expression}")

    async def click(self, x: float, y: float) -> None:
        """A real left click: mouse pressed and released at page coordinates."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                            clickCount=0 if kind == "mouseMoved" else 1)

    async def press(self, key: str, key_code: int) -> None:
        """A real key press, e.g. ``press("ArrowRight", 39)``."""
        for kind in ("keyDown", "keyUp"):
            await self.send("Input.dispatchKeyEvent", type=kind, key=key, code=key,
                            windowsVirtualKeyCode=key_code)

    def close(self) -> None:
        self.connection.close()
