"""10,000 concurrent keep-alive connections, each answered twice, with ``ulimit -n`` raised here."""

from __future__ import annotations

import pytest

from bench import connections


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_ten_thousand_keep_alive_connections_are_held(tmp_path) -> None:
    try:
        result = connections.run(10000, threads=2, timeout=240, out_dir=str(tmp_path))
    except RuntimeError as exc:  # a hard limit below 10,200 descriptors
        pytest.skip(str(exc))
    assert (result.held, result.answered_twice) == (10000, 10000), result.line()
