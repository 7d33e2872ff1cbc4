"""A tiny real HTTP client for the apps' tests: status, headers and decoded body."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def fetch(url: str, body: Any = None, *, raw_body: bytes | None = None,
          timeout: float = 30) -> tuple[int, str, Any]:
    """(status, reason, body) of a GET, or a POST when a body is given.

    The body comes back decoded from JSON when it is JSON, else as text.
    """
    data = raw_body if raw_body is not None else (
        None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, reason, payload = response.status, response.reason, response.read()
    except urllib.error.HTTPError as error:
        status, reason, payload = error.code, error.reason, error.read()
    text = payload.decode()
    try:
        return status, reason, json.loads(text)
    except ValueError:
        return status, reason, text
